/**
 * A real OpenID provider for the tests: `oidc-provider` (the certified Node implementation) on a
 * free port with its own RSA key. Its sign-in page is a plain form asking which test person signs
 * in; consent is implied for the app's client. `tamper` changes the next ID tokens it issues, each
 * re-signed with its own key (or with a broken signature), so the app's checks can be tested one by one.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { generateKeyPairSync, randomUUID } from 'node:crypto'
import { SignJWT, decodeJwt, decodeProtectedHeader, importJWK, type JWK } from 'jose'
import Provider from 'oidc-provider'
import { freePort } from './free-port'

/** A person the provider knows: the claims it gives about them. */
export interface TestPerson {
  sub: string
  email?: string
  email_verified?: boolean
  name?: string
  preferred_username?: string
  groups?: string[]
}

/** How the next ID tokens are spoiled (one check of the app each). */
export type IdTokenTamper = 'issuer' | 'audience' | 'nonce' | 'expired' | 'signature' | undefined

export interface TestOidcProvider {
  issuer: string
  /** People by the login name typed on its form. */
  people: Map<string, TestPerson>
  /** Spoils every ID token issued until set back to undefined. */
  tamper: IdTokenTamper
  /** Token requests it answered (a replayed code shows as a second request for it). */
  tokenRequests: number
  close(): Promise<void>
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = ''
    request.setEncoding('utf8')
    request.on('data', (chunk: string) => { text += chunk })
    request.on('end', () => resolve(text))
    request.on('error', reject)
  })
}

const escape = (text: string) => text.replace(/[&<>"']/g, char => `&#${char.charCodeAt(0)};`)

/** Starts a provider whose client `clientId`/`clientSecret` may return to `redirectUris`. */
export async function startTestOidcProvider(options: { clientId: string, clientSecret: string, redirectUris: string[], postLogoutRedirectUris: string[], host?: string }): Promise<TestOidcProvider> {
  const port = await freePort()
  const issuer = `http://${options.host ?? '127.0.0.1'}:${port}`
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const jwk = { ...privateKey.export({ format: 'jwk' }), kid: 'test-key', alg: 'RS256', use: 'sig' } as JWK
  const signingKey = await importJWK(jwk, 'RS256')
  const people = new Map<string, TestPerson>()
  const provider = new Provider(issuer, {
    clients: [{
      client_id: options.clientId,
      client_secret: options.clientSecret,
      redirect_uris: options.redirectUris,
      post_logout_redirect_uris: options.postLogoutRedirectUris,
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_post',
    }],
    jwks: { keys: [jwk] },
    scopes: ['openid', 'email', 'profile', 'groups'],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'preferred_username'], groups: ['groups'] },
    features: { devInteractions: { enabled: false }, rpInitiatedLogout: { enabled: true } },
    pkce: { required: () => true },
    findAccount: (_ctx, id) => {
      const person = [...people.values()].find(item => item.sub === id)
      return person ? { accountId: id, claims: () => ({ ...person }) } : undefined
    },
    // The app is first-party here: what it asks for is granted without a consent page.
    loadExistingGrant: async (ctx) => {
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client!.clientId, accountId: ctx.oidc.session!.accountId! })
      grant.addOIDCScope('openid email profile groups')
      await grant.save()
      return grant
    },
    cookies: { keys: [randomUUID()] },
  })
  const handle = provider.callback()
  const state: TestOidcProvider = { issuer, people, tamper: undefined, tokenRequests: 0, close: async () => {} }

  /** Answers the token endpoint through the provider, then spoils its ID token as `state.tamper` says. */
  async function tokenEndpoint(request: IncomingMessage, response: ServerResponse): Promise<void> {
    state.tokenRequests++
    const tamper = state.tamper
    if (!tamper) return void handle(request, response)
    const chunks: Buffer[] = []
    const write = response.write.bind(response)
    const end = response.end.bind(response)
    response.write = ((chunk: Buffer | string) => {
      chunks.push(Buffer.from(chunk))
      return true
    }) as typeof response.write
    response.end = ((chunk?: Buffer | string) => {
      if (chunk) chunks.push(Buffer.from(chunk))
      void (async () => {
        let body = Buffer.concat(chunks).toString('utf8')
        try {
          const tokens = JSON.parse(body) as { id_token?: string }
          if (tokens.id_token) {
            const claims = decodeJwt(tokens.id_token)
            const header = decodeProtectedHeader(tokens.id_token)
            const now = Math.floor(Date.now() / 1000)
            const changed = {
              ...claims,
              ...(tamper === 'issuer' ? { iss: 'https://another-issuer.example' } : {}),
              ...(tamper === 'audience' ? { aud: 'another-client' } : {}),
              ...(tamper === 'nonce' ? { nonce: 'another-nonce' } : {}),
              ...(tamper === 'expired' ? { iat: now - 7_200, exp: now - 3_600 } : {}),
            }
            let token = await new SignJWT(changed).setProtectedHeader({ alg: 'RS256', kid: header.kid }).sign(signingKey)
            if (tamper === 'signature') {
              const [head, payload] = tokens.id_token.split('.')
              const sub = JSON.parse(Buffer.from(payload!, 'base64url').toString()) as Record<string, unknown>
              // Another person's id under the provider's real signature of the original.
              token = `${head}.${Buffer.from(JSON.stringify({ ...sub, sub: 'someone-else' })).toString('base64url')}.${tokens.id_token.split('.')[2]}`
            }
            body = JSON.stringify({ ...tokens, id_token: token })
          }
        } catch {
          // Not a token answer (an error): passed on as it is.
        }
        if (!response.headersSent) response.setHeader('content-length', Buffer.byteLength(body))
        write(body)
        end()
      })()
      return response
    }) as typeof response.end
    handle(request, response)
  }

  /** The sign-in page (which person signs in) and its answer. */
  async function interaction(request: IncomingMessage, response: ServerResponse, uid: string, submitted: boolean): Promise<void> {
    try {
      const details = await provider.interactionDetails(request, response)
      if (details.uid !== uid) throw new Error('another interaction')
      if (!submitted) {
        response.setHeader('content-type', 'text/html; charset=utf-8')
        response.end(`<!doctype html><html lang="en"><head><title>Test provider sign-in</title></head><body><main><h1>Test provider</h1><form method="post" action="/interaction/${escape(uid)}/login"><label>Login <input name="login" autocomplete="username"></label><button type="submit">Sign in at the provider</button></form></main></body></html>`)
        return
      }
      const login = new URLSearchParams(await readBody(request)).get('login') ?? ''
      const person = people.get(login)
      if (!person) {
        await provider.interactionFinished(request, response, { error: 'access_denied', error_description: 'No such test person' }, { mergeWithLastSubmission: false })
        return
      }
      await provider.interactionFinished(request, response, { login: { accountId: person.sub } }, { mergeWithLastSubmission: false })
    } catch (error) {
      response.statusCode = 400
      response.end(String(error))
    }
  }

  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0]!
    const match = /^\/interaction\/([\w-]+)(\/login)?$/.exec(path)
    if (match) return void interaction(request, response, match[1]!, request.method === 'POST' && match[2] === '/login')
    if (path === '/token' && request.method === 'POST') return void tokenEndpoint(request, response)
    handle(request, response)
  })
  await new Promise<void>(resolve => server.listen(port, '127.0.0.1', resolve))
  state.close = () => new Promise<void>((resolve) => {
    server.closeAllConnections()
    server.close(() => resolve())
  })
  return state
}
