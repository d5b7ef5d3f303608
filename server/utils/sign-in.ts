import { consola } from 'consola'
import { getQuery, getRequestProtocol, getRequestURL, getRouterParam, useSession, type H3Event } from 'h3'
import type { ProviderSignInError } from '../../shared/types/account'
import { AuthError } from '../lib/auth/auth-errors'
import { OidcSignInError, PENDING_SIGN_IN_MS, type PendingSignIn } from '../lib/auth/oidc/oidc-sign-in'
import { PASSKEY_CEREMONY_MS, passkeySite } from '../lib/auth/passkeys'
import type { StoredAccount } from '../lib/stores/accounts/account-store'
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/types'
import { serverSecret } from '../lib/security/session-secret'
import { startedServerRuntime } from '../lib/runtime/current'

const log = () => consola.withTag('auth')

const runtime = startedServerRuntime

/**
 * The sign-in a browser started at an identity provider, kept in a cookie of its own (sealed, ten
 * minutes, sent only to the provider routes) until the provider sends the browser back.
 */
function pendingSignIn(event: H3Event) {
  const config = useServerConfig(event)
  return useSession<Partial<PendingSignIn>>(event, {
    name: `${config.session.name}-sign-in`,
    password: serverSecret(config),
    maxAge: PENDING_SIGN_IN_MS / 1000,
    cookie: { httpOnly: true, sameSite: 'lax', path: '/api/auth/oidc', secure: getRequestProtocol(event) === 'https' },
  })
}

/** A path of this app to open after signing in (anything else: the start page). */
function appPath(value: unknown): string {
  return typeof value === 'string' && value.startsWith('/') && !value.startsWith('//') && !value.includes('\\') && value.length <= 2_000 ? value : '/'
}

/** Where provider `id` sends the browser back: on the origin others are given (NUXT_SITE_URL, else the request's own). */
function callbackUrl(event: H3Event, id: string): string {
  return `${event.context.site.appOrigin}/api/auth/oidc/${encodeURIComponent(id)}/callback`
}

/** The sign-in page with a known reason (never text from the address: only these codes have words). */
function refused(code: ProviderSignInError): string {
  return `/login?signInError=${code}`
}

/**
 * Sign-in through the operator's OpenID Connect providers (NUXT_AUTH_OIDC_CONFIG_FILE), for the
 * routes: the list for the sign-in page, the two halves of the round trip (each answering where to
 * send the browser), and the provider's sign-out address for a session it signed in.
 */
const providerSignIn = {
  list(): Array<{ id: string, name: string }> {
    return runtime().oidc.list()
  },

  /** The provider's sign-in URL for `:provider` (PKCE, state and nonce kept in the pending cookie), or the sign-in page saying why not. */
  async start(event: H3Event): Promise<string> {
    const id = getRouterParam(event, 'provider') ?? ''
    try {
      const { url, pending } = await runtime().oidc.begin(id, callbackUrl(event, id), appPath(getQuery(event).returnTo))
      const session = await pendingSignIn(event)
      await session.clear()
      await session.update(pending)
      return url
    } catch (error) {
      if (!(error instanceof OidcSignInError)) throw error
      log().warn(`Sign-in through "${id}" could not start: ${error.message}`)
      return refused(error.code)
    }
  },

  /**
   * The provider's answer: checked (state, PKCE, nonce, the ID token's signature, issuer, audience
   * and expiry), the person's account found, linked or created, a session started. Answers the
   * app path to open, or the sign-in page with the reason (details go to the log).
   */
  async finish(event: H3Event): Promise<string> {
    const id = getRouterParam(event, 'provider') ?? ''
    const session = await pendingSignIn(event)
    const data = session.data
    // Used once, whatever happens next.
    await session.clear()
    const pending = typeof data.state === 'string' && typeof data.provider === 'string' ? data as PendingSignIn : undefined
    const { oidc, accounts } = runtime()
    try {
      await accounts.attempts.beforeProviderSignIn(event.context.clientAddress)
      if (pending && pending.provider !== id) throw new OidcSignInError('expired', `This sign-in was started with another provider ("${pending.provider}"). Start it again from the sign-in page.`)
      const identity = await oidc.finish(new URL(`${callbackUrl(event, id)}${getRequestURL(event).search}`), pending)
      const account = await accounts.identities.signIn(oidc.provider(id), identity)
      await setSessionAccount(event, account, id)
      return pending?.returnTo ?? '/'
    } catch (error) {
      let code: ProviderSignInError
      if (error instanceof OidcSignInError) code = error.code
      else if (AuthError.isInstance(error)) code = error.refusal === 'not-allowed' || error.refusal === 'disabled' ? error.refusal : 'failed'
      else throw error
      log().warn(`Sign-in through "${id}" refused: ${(error as Error).message}`)
      return refused(code)
    }
  },

  /** The provider's sign-out URL when this request's session came from one that offers it (read before the session ends). */
  async signOutUrl(event: H3Event): Promise<string | undefined> {
    const via = event.context.sessionVia
    return via ? runtime().oidc.signOutUrl(via, `${event.context.site.appOrigin}/login`) : undefined
  },
}

/** How long the code may follow the password. */
const SECOND_STEP_S = 5 * 60

/** The sign-in waiting for its code: a sealed cookie of its own, sent only to the sign-in routes. */
function pendingSecondStep(event: H3Event) {
  const config = useServerConfig(event)
  return useSession<{ userId?: string, version?: number }>(event, {
    name: `${config.session.name}-second-step`,
    password: serverSecret(config),
    maxAge: SECOND_STEP_S,
    cookie: { httpOnly: true, sameSite: 'strict', path: '/api/auth', secure: getRequestProtocol(event) === 'https' },
  })
}

/**
 * The second step of a password sign-in, for accounts with two-step sign-in: `start` remembers
 * whose password was right (five minutes, in a sealed cookie; no session yet), `finish` checks
 * their code and answers the account to start a session for (the cookie is used up).
 */
const secondStep = {
  async start(event: H3Event, account: StoredAccount): Promise<void> {
    const session = await pendingSecondStep(event)
    await session.clear()
    await session.update({ userId: account.id, version: account.sessionVersion })
  },

  /** Whose password was right, for a second step by passkey (undefined: none in the last five minutes). */
  async pendingUser(event: H3Event): Promise<string | undefined> {
    return (await pendingSecondStep(event)).data.userId
  },

  /** Checks the second step (`check`: a code, or a passkey's answer) for the account whose password was right; answers it. */
  async finish(event: H3Event, check: (userId: string) => Promise<unknown>): Promise<StoredAccount> {
    const session = await pendingSecondStep(event)
    const { userId, version } = session.data
    if (!userId) throw new AuthError('not-signed-in', 'Sign in with your name and password first: the code is asked after them, for five minutes.')
    const accounts = useAccounts()
    await check(userId)
    await session.clear()
    const account = await accounts.getAccount(userId)
    // The password changed, the account was disabled or deleted meanwhile: the first step no longer holds.
    if (!account || account.sessionVersion !== version) throw new AuthError('session-ended', 'Your sign-in has ended (the account changed meanwhile). Sign in again.')
    if (account.disabled) throw new AuthError('disabled', 'This account is disabled. Ask the admin of this server.')
    return account
  },
}

/** A passkey sign-in's challenge, between its options and its answer: a sealed cookie of its own, sent only to the passkey routes. */
function pendingPasskey(event: H3Event) {
  const config = useServerConfig(event)
  return useSession<{ challenge?: string, afterPassword?: boolean }>(event, {
    name: `${config.session.name}-passkey`,
    password: serverSecret(config),
    maxAge: PASSKEY_CEREMONY_MS / 1000,
    cookie: { httpOnly: true, sameSite: 'strict', path: '/api/auth/passkey', secure: getRequestProtocol(event) === 'https' },
  })
}

/**
 * Passkeys (lib/auth/passkeys.ts) for the routes, bound to the origin the app is served at: a
 * sign-in by passkey alone, the second step after a password, and adding one in Settings.
 */
const passkey = {
  /** Options for the browser: any of this site's passkeys, or (`afterPassword`) one of the account whose password was just right. */
  async signInOptions(event: H3Event, afterPassword: boolean) {
    const site = passkeySite(event.context.site.appOrigin)
    const userId = afterPassword ? await secondStep.pendingUser(event) : undefined
    if (afterPassword && !userId) throw new AuthError('not-signed-in', 'Sign in with your name and password first: the passkey is asked after them, for five minutes.')
    const options = await useAccounts().passkeys.signInOptions(site, userId)
    const session = await pendingPasskey(event)
    await session.clear()
    await session.update({ challenge: options.challenge, afterPassword })
    return options
  },

  /** Checks the browser's answer; answers the account to start a session for (the challenge is used up, whatever the answer). */
  async signIn(event: H3Event, response: AuthenticationResponseJSON): Promise<StoredAccount> {
    const session = await pendingPasskey(event)
    const { challenge, afterPassword } = session.data
    await session.clear()
    if (!challenge) throw new AuthError('passkey-setup', 'Start the passkey sign-in again: it is older than five minutes, or was not started here.')
    const accounts = useAccounts()
    await accounts.attempts.beforeProviderSignIn(event.context.clientAddress)
    const site = passkeySite(event.context.site.appOrigin)
    if (afterPassword) return secondStep.finish(event, userId => accounts.passkeys.signIn(site, challenge, response, userId))
    return accounts.passkeys.signIn(site, challenge, response)
  },

  registrationOptions(event: H3Event, userId: string, accountName: string) {
    return useAccounts().passkeys.registrationOptions(userId, accountName, passkeySite(event.context.site.appOrigin))
  },

  register(event: H3Event, userId: string, response: RegistrationResponseJSON, name: string | undefined) {
    return useAccounts().passkeys.register(userId, response, name, passkeySite(event.context.site.appOrigin))
  },
}

/**
 * The steps of signing in besides a name and password: through the operator's identity providers
 * (`provider`), the code or passkey a password sign-in asks for next when the account turned on
 * two-step sign-in (`secondStep`), and passkeys (`passkey`).
 */
export const signInSteps = { provider: providerSignIn, secondStep, passkey }
