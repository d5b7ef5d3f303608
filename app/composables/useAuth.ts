import type { AuthState, SessionPrincipal } from '../../shared/types/account'

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

  /** Signs in with a password; answers 'code' when the account asks for a code from its authenticator app next (`signInWithCode`). */
  async function signIn(name: string, password: string): Promise<'signed-in' | 'code'> {
    const answer = await $fetch<{ twoStepRequired?: boolean }>('/api/auth/login', { method: 'POST', body: { name, password } })
    if (answer.twoStepRequired) return 'code'
    await refresh()
    return 'signed-in'
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
  return { state, user, refresh, signIn, signInWithCode, signUp, signOut }
}
