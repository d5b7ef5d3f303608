/** A credential service as Settings shows it: which tools need it, and which of its keys are set where (values are never sent back). */
export interface CredentialService {
  service: string
  /** Tools that declare they need it. */
  tools: string[]
  /** Each key: `mine` (set by this person), `everyone` (set by an admin for everyone), `server` (set server-wide by the operator), or null (not set). */
  keys: Array<{ key: string, set: 'mine' | 'everyone' | 'server' | null }>
}
