import { tr } from './i18n'

/**
 * Whether this page may use passkeys at all: WebAuthn binds a passkey to the site's name, so it
 * needs a secure context (HTTPS, or localhost) and a domain name, never an IP address.
 */
export function passkeysPossibleHere(): boolean {
  if (typeof window === 'undefined' || !window.isSecureContext) return false
  const host = window.location.hostname
  return !(host.includes(':') || host.startsWith('[') || /^\d{1,3}(?:\.\d{1,3}){3}$/.test(host))
}

/**
 * Words for a passkey ceremony the browser ended (`@simplewebauthn/browser` errors): the person
 * cancelled or let it time out, or the device already holds a passkey for this account.
 */
function passkeyProblem(error: unknown): string {
  const failed = error as { name?: string, code?: string, cause?: { name?: string } } | null
  const name = failed?.cause?.name ?? failed?.name
  if (failed?.code === 'ERROR_AUTHENTICATOR_PREVIOUSLY_REGISTERED' || name === 'InvalidStateError') return tr('passkeys.alreadyOnDevice')
  if (name === 'NotAllowedError' || name === 'AbortError') return tr('passkeys.cancelled')
  return error instanceof Error ? error.message : tr('passkeys.cancelled')
}

/** The browser's part of a passkey ceremony ended without a passkey; the message says why in the person's words. */
export class PasskeyCeremonyError extends Error {
  override readonly name = 'PasskeyCeremonyError'
}

/**
 * Runs the browser's part of a passkey ceremony (`startRegistration`, `startAuthentication`): what
 * it throws becomes a `PasskeyCeremonyError`, so a caller tells it from the server's answers.
 */
export async function inBrowserCeremony<T>(ceremony: () => Promise<T>): Promise<T> {
  try {
    return await ceremony()
  } catch (error) {
    throw new PasskeyCeremonyError(passkeyProblem(error), { cause: error })
  }
}
