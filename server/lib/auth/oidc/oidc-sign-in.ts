/**
 * Sign-in through OpenID Connect providers with openid-client (a certified relying party):
 * Authorization Code with PKCE, `state` and `nonce` checked, the ID token's signature (against
 * the provider's published keys), issuer, audience and expiry verified by the library. Each provider's metadata is discovered on first
 * use and kept; a provider that cannot be reached is tried again on the next sign-in.
 */
import type { Configuration } from 'openid-client'
import type { OidcProviderConfig } from './provider-config'

/** What a browser keeps (sealed, for ten minutes) between leaving for the provider and coming back. */
export interface PendingSignIn {
  provider: string
  state: string
  nonce: string
  codeVerifier: string
  /** Where in the app to go after signing in (a path of this app). */
  returnTo: string
  startedAt: number
}

/** Who the provider says signed in, from the verified ID token (and the userinfo endpoint). */
export interface VerifiedIdentity {
  provider: string
  subject: string
  email: string | null
  emailVerified: boolean
  /** A display name: `name`, else `preferred_username`, else the e-mail. */
  displayName: string | null
  preferredUsername: string | null
  /** The values of the provider's role claim (and groups claim), as strings. */
  claimValues: (claim: string) => string[]
}

/** Why a sign-in through a provider did not work, in words for the person (and the log). */
export class OidcSignInError extends Error {
  override name = 'OidcSignInError'
  constructor(readonly code: 'unknown-provider' | 'unreachable' | 'expired' | 'refused' | 'invalid', message: string) {
    super(message)
  }
}

/** How long a started sign-in may take at the provider. */
export const PENDING_SIGN_IN_MS = 10 * 60_000
/** How long one request to a provider may take (seconds, as openid-client counts). */
const PROVIDER_TIMEOUT_SECONDS = 10

function claimStrings(value: unknown): string[] {
  if (typeof value === 'string') return [value]
  if (Array.isArray(value)) return value.filter((item): item is string => typeof item === 'string').slice(0, 1_000)
  return []
}

/** openid-client, loaded with the first provider sign-in (a server without providers never reads it). */
let openidClient: Promise<typeof import('openid-client')> | undefined
const loadOpenidClient = () => (openidClient ??= import('openid-client'))

/** The configured providers and what signing in through them takes. */
export class OidcSignIn {
  private readonly discovered = new Map<string, Promise<Configuration>>()
  private readonly byId: Map<string, OidcProviderConfig>

  constructor(readonly providers: readonly OidcProviderConfig[]) {
    this.byId = new Map(providers.map(provider => [provider.id, provider]))
  }

  /** The providers for the sign-in page: id and name. */
  list(): Array<{ id: string, name: string }> {
    return this.providers.map(({ id, name }) => ({ id, name }))
  }

  provider(id: string): OidcProviderConfig {
    const provider = this.byId.get(id)
    if (!provider) throw new OidcSignInError('unknown-provider', `There is no sign-in provider "${id}".`)
    return provider
  }

  /** The URL to send the browser to, and what to keep until it comes back to `redirectUri`. */
  async begin(id: string, redirectUri: string, returnTo: string, now = Date.now()): Promise<{ url: string, pending: PendingSignIn }> {
    const provider = this.provider(id)
    const config = await this.configuration(provider)
    const client = await loadOpenidClient()
    const codeVerifier = client.randomPKCECodeVerifier()
    const state = client.randomState()
    const nonce = client.randomNonce()
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: provider.scopes.join(' '),
      code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    })
    return { url: url.href, pending: { provider: id, state, nonce, codeVerifier, returnTo, startedAt: now } }
  }

  /**
   * Checks the provider's answer at `callbackUrl` against `pending` and exchanges its code: the
   * state, the PKCE verifier, the nonce, and the ID token (signature, issuer, audience, expiry).
   */
  async finish(callbackUrl: URL, pending: PendingSignIn | undefined, now = Date.now()): Promise<VerifiedIdentity> {
    const refusal = callbackUrl.searchParams.get('error')
    if (refusal) {
      const why = callbackUrl.searchParams.get('error_description') ?? refusal
      throw new OidcSignInError('refused', `The provider did not sign you in: ${why.slice(0, 300)}`)
    }
    if (!pending || now - pending.startedAt > PENDING_SIGN_IN_MS) throw new OidcSignInError('expired', 'This sign-in was not started here or took too long. Start it again from the sign-in page.')
    const provider = this.provider(pending.provider)
    const config = await this.configuration(provider)
    const client = await loadOpenidClient()
    let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>
    try {
      tokens = await client.authorizationCodeGrant(config, callbackUrl, {
        pkceCodeVerifier: pending.codeVerifier,
        expectedState: pending.state,
        expectedNonce: pending.nonce,
        idTokenExpected: true,
      })
    } catch (error) {
      throw new OidcSignInError('invalid', `Signing in through ${provider.name} failed: ${describe(error)}`)
    }
    const claims = tokens.claims()
    if (!claims) throw new OidcSignInError('invalid', `Signing in through ${provider.name} failed: no ID token came back.`)
    let all: Record<string, unknown> = { ...claims }
    // Providers put e-mail, names and groups in the ID token or only at the userinfo endpoint.
    if ((claims.email === undefined || (provider.roles && claims[provider.roles.claim] === undefined) || (provider.groupsClaim && claims[provider.groupsClaim] === undefined)) && config.serverMetadata().userinfo_endpoint) {
      try {
        all = { ...await client.fetchUserInfo(config, tokens.access_token, claims.sub), ...all }
      } catch {
        // Userinfo is extra: the verified ID token is enough to sign in.
      }
    }
    const text = (value: unknown) => (typeof value === 'string' && value.trim() !== '' ? value.trim().slice(0, 200) : null)
    const email = text(all.email)
    return {
      provider: provider.id,
      subject: claims.sub,
      email: email?.toLowerCase() ?? null,
      emailVerified: all.email_verified === true,
      displayName: text(all.name) ?? text(all.preferred_username) ?? email,
      preferredUsername: text(all.preferred_username),
      claimValues: claim => claimStrings(all[claim]),
    }
  }

  /** The provider's sign-out URL (RP-initiated logout), when it has one. */
  async signOutUrl(id: string, postLogoutRedirectUri: string): Promise<string | undefined> {
    const provider = this.byId.get(id)
    if (!provider) return undefined
    try {
      const [config, client] = await Promise.all([this.configuration(provider), loadOpenidClient()])
      if (!config.serverMetadata().end_session_endpoint) return undefined
      return client.buildEndSessionUrl(config, { client_id: provider.clientId, post_logout_redirect_uri: postLogoutRedirectUri }).href
    } catch {
      return undefined
    }
  }

  private configuration(provider: OidcProviderConfig): Promise<Configuration> {
    let found = this.discovered.get(provider.id)
    if (!found) {
      // The ID token's signature is checked against the provider's keys even though it comes
      // straight from the token endpoint (openid-client skips that by default, as OIDC allows).
      found = loadOpenidClient().then((client) => {
        const execute = [client.enableNonRepudiationChecks, ...(provider.allowHttp ? [client.allowInsecureRequests] : [])]
        return client.discovery(new URL(provider.issuer), provider.clientId, provider.clientSecret, provider.clientSecret ? client.ClientSecretPost(provider.clientSecret) : client.None(), {
          execute,
          timeout: PROVIDER_TIMEOUT_SECONDS,
        })
      }).then((config) => {
        // The token and userinfo requests get the same bound as discovery.
        config.timeout = PROVIDER_TIMEOUT_SECONDS
        return config
      }, (error) => {
        // Not kept: the next sign-in tries again.
        this.discovered.delete(provider.id)
        throw new OidcSignInError('unreachable', `${provider.name} cannot be reached right now (${describe(error)}). Try again in a moment.`)
      })
      this.discovered.set(provider.id, found)
    }
    return found
  }
}

/** An openid-client error as one line: its message and, from the provider, its error code. */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  const cause = (error as { error?: string, error_description?: string })
  const detail = cause.error_description ?? cause.error
  return (detail ? `${error.message} (${detail})` : error.message).slice(0, 300)
}
