/**
 * A person's consent to send their own credentials to an MCP server an admin added in the app.
 * Such a server's headers or environment may name a person's credential (`Bearer
 * ${credentials:github/token}`); without consent an admin could point it at any address and
 * collect everyone's tokens. So a person's values are filled in only after that person allowed
 * that server *at its current address, with the credentials it asks for now* (Settings →
 * Connections): a changed URL or command asks again, and so does a credential added to the set (a
 * server that asks for fewer keeps the consent). Servers from the operator's config file are the
 * operator's and need no consent. A consent stored before credential sets were kept (the address
 * only) asks once more.
 */
import type { McpServerConfig } from './config'
import type { McpCredentialConsent } from '../../../../shared/types/credentials'
import type { SettingsStore } from '../../stores/settings/settings-store'

/** The part of the settings store consents live in. */
type ConsentStore = Pick<SettingsStore, 'getSetting' | 'setSetting' | 'deleteSettings'>

/** Where a server sends what it is given: its URL's origin, or its command and arguments. */
export function mcpTarget(config: McpServerConfig): string {
  if (config.transport === 'http') {
    try {
      return new URL(config.url).origin
    } catch {
      return config.url
    }
  }
  return [config.command, ...config.args].join(' ')
}

/** Raised by a call whose person has not allowed the server their credentials; the model is told where to allow it. */
export class McpConsentRequired extends Error {
  override name = 'McpConsentRequired'
  constructor(readonly server: string, readonly target: string, needs: readonly string[]) {
    super(`MCP server "${server}" (added by an admin, at ${target}) would send your ${needs.map(need => `"${need}"`).join(', ')} credential there. Tell the user to allow it in Settings → Connections (/settings#connections) if they trust that address.`)
  }
}

const key = (userId: string, server: string) => `mcp-consent:${userId}:${server}`

/** What a consent covers: an address and the credentials it may send there. */
interface ConsentScope {
  target: string
  credentials: string[]
}

function readScope(stored: string | null | undefined): ConsentScope | undefined {
  if (!stored?.startsWith('{')) return undefined
  try {
    const scope = JSON.parse(stored) as Partial<ConsentScope>
    return typeof scope.target === 'string' && Array.isArray(scope.credentials) ? { target: scope.target, credentials: scope.credentials.filter(item => typeof item === 'string') } : undefined
  } catch {
    return undefined
  }
}

/** People's consents, kept in the account store's settings. */
export class McpCredentialConsents {
  constructor(private readonly store: ConsentStore) {}

  /** Whether `userId` allowed `server` at `target` to send each of `credentials` (`service/key`). */
  async allowed(userId: string, server: string, target: string, credentials: readonly string[]): Promise<boolean> {
    const scope = readScope(await this.store.getSetting(key(userId, server)))
    return scope !== undefined && scope.target === target && credentials.every(need => scope.credentials.includes(need))
  }

  /** `userId` allows `server` at `target` these `credentials`, and no others. */
  async allow(userId: string, server: string, target: string, credentials: readonly string[]): Promise<void> {
    const scope: ConsentScope = { target, credentials: [...new Set(credentials)].sort() }
    await this.store.setSetting(key(userId, server), JSON.stringify(scope))
  }

  async withdraw(userId: string, server: string): Promise<void> {
    // Emptied, not deleted: deleting by prefix would take "server2" with "server".
    await this.store.setSetting(key(userId, server), '')
  }

  /** Forgets every consent of `userId` (their account is deleted). */
  async deleteUser(userId: string): Promise<void> {
    await this.store.deleteSettings(`mcp-consent:${userId}:`)
  }

  /** Where `userId` stands with each of `servers` (those that would take their credentials). */
  async list(userId: string, servers: ReadonlyArray<{ name: string, target: string, needs: string[] }>): Promise<McpCredentialConsent[]> {
    return Promise.all(servers.map(async server => ({ server: server.name, target: server.target, credentials: server.needs, allowed: await this.allowed(userId, server.name, server.target, server.needs) })))
  }
}
