import type { PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/types'
import type { AuthState, SecondStepNeeded, SessionPrincipal } from '../../shared/types/account'
import { inBrowserCeremony } from '../utils/passkeys'

/**
 * Who is signed in, and signing in, up and out. The state comes from `GET /api/auth/me` once per
 * page load (and after each change), shared by every component.
 */
export function useAuth() {
  const state = useState<AuthState | null>('auth-state', () => null)

  async function refresh(): Promise<AuthState> {
    state.value = await $fetch<AuthState>('/api/auth/me')
    return state.value
  }

  /**
   * Signs in with a password; when the account asks for a second step, answers what it may be
   * (a code: `signInWithCode`; a passkey: `signInWithPasskey(true)`), else 'signed-in'.
   */
  async function signIn(name: string, password: string): Promise<'signed-in' | SecondStepNeeded['methods']> {
    const answer = await $fetch<Partial<SecondStepNeeded>>('/api/auth/login', { method: 'POST', body: { name, password } })
    if (answer.twoStepRequired) return answer.methods ?? ['code']
    await refresh()
    return 'signed-in'
  }

  /**
   * Signs in with a passkey the browser holds for this site: alone, or (`afterPassword`) as the
   * second step of the password just given. The browser asks the person (a fingerprint, a PIN).
   */
  async function signInWithPasskey(afterPassword = false): Promise<void> {
    // The WebAuthn helpers load with the sign-in page that offers passkeys, not with every page (this composable is on all of them).
    const [options, { startAuthentication }] = await Promise.all([
      $fetch<PublicKeyCredentialRequestOptionsJSON>('/api/auth/passkey/options', { method: 'POST', body: afterPassword ? { afterPassword } : {} }),
      import('@simplewebauthn/browser'),
    ])
    const response = await inBrowserCeremony(() => startAuthentication({ optionsJSON: options }))
    await $fetch('/api/auth/passkey', { method: 'POST', body: { response } })
    await refresh()
  }

  /** The second step of a password sign-in: a code from the authenticator app, or a recovery code. */
  async function signInWithCode(code: string): Promise<void> {
    await $fetch('/api/auth/two-step', { method: 'POST', body: { code } })
    await refresh()
  }

  /** Creates an account (the first one: the admin, with the server's setup code when it asks for one) and signs it in. */
  async function signUp(name: string, password: string, invite?: string, keepGuestData = false, setupCode?: string): Promise<void> {
    await $fetch('/api/auth/register', { method: 'POST', body: { name, password, ...(invite ? { invite } : {}), ...(keepGuestData ? { keepGuestData } : {}), ...(setupCode ? { setupCode } : {}) } })
    await refresh()
  }

  /** Signs out; a session from an identity provider that offers sign-out answers its URL, to open next (else null). */
  async function signOut(everywhere = false): Promise<string | null> {
    const answer = await $fetch<{ providerSignOut?: string }>('/api/auth/logout', { method: 'POST', body: everywhere ? { everywhere: true } : {} })
    await refresh()
    return answer.providerSignOut ?? null
  }

  const user = computed<SessionPrincipal | null>(() => state.value?.user ?? null)
  return { state, user, refresh, signIn, signInWithCode, signInWithPasskey, signUp, signOut }
}
