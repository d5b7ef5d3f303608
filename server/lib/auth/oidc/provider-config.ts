/**
 * The operator's identity providers (OpenID Connect), from the file NUXT_AUTH_OIDC_CONFIG_FILE
 * names (JSON, or YAML for `.yaml`/`.yml`). Each is one button on the sign-in page. A client
 * secret is never in the file: `clientSecretEnv` names the environment variable that holds it.
 */
import { z } from 'zod'
import { readOperatorFile } from '../../config/operator-file'

const groupList = z.array(z.string().trim().min(1).max(200)).max(100)

const providerSchema = z.object({
  id: z.string().regex(/^[a-z0-9][a-z0-9-]{0,31}$/, 'must be 1-32 lower-case letters, digits or "-", such as "keycloak"'),
  name: z.string().trim().min(1).max(60),
  issuer: z.url({ protocol: /^https?$/, error: 'must be the issuer URL, such as https://login.example.com/realms/corp' }),
  clientId: z.string().trim().min(1).max(500),
  clientSecretEnv: z.string().regex(/^[A-Z_][A-Z0-9_]{0,99}$/, 'must name an environment variable, such as OIDC_KEYCLOAK_SECRET').optional(),
  scopes: z.array(z.string().regex(/^[\x21\x23-\x5B\x5D-\x7E]{1,100}$/, 'must be a scope name without spaces')).min(1).max(20).default(['openid', 'profile', 'email']),
  /** Roles from a claim of the ID token (a string or a list, such as `groups`). */
  roles: z.object({
    claim: z.string().trim().min(1).max(100).default('groups'),
    admin: groupList.default([]),
    user: groupList.default([]),
    /** Refuse a person in none of the listed groups (else they get `defaultRole`). */
    required: z.boolean().default(false),
  }).strict().optional(),
  /** A groups claim kept as the person's groups (`group:<name>` in tool policies). */
  groupsClaim: z.string().trim().min(1).max(100).optional(),
  /** Link a first sign-in to the existing account named by the person's e-mail, when the provider says it verified it. */
  linkByEmail: z.boolean().default(false),
  /** Allow an `http://` issuer (a provider on this machine in development); never for a public one. */
  allowHttp: z.boolean().default(false),
}).strict()

/** One identity provider as configured. */
export type OidcProviderConfig = z.output<typeof providerSchema> & { clientSecret?: string }

const fileSchema = z.object({ providers: z.array(providerSchema).max(20) }).strict()

/** A provider file that cannot be used: says what to fix. */
export class OidcConfigError extends Error {
  override name = 'OidcConfigError'
}

/**
 * The providers of `raw` (a parsed file), each with its client secret from `env`; throws an
 * OidcConfigError listing every problem (by provider and field) when the file is not usable.
 */
export function parseOidcProviders(raw: unknown, env: Record<string, string | undefined>, source = 'NUXT_AUTH_OIDC_CONFIG_FILE'): OidcProviderConfig[] {
  const parsed = fileSchema.safeParse(raw)
  if (!parsed.success) {
    const problems = parsed.error.issues.map(issue => `- ${issue.path.join('.') || 'the file'}: ${issue.message}`)
    throw new OidcConfigError(`Invalid identity provider config (${source}):\n${problems.join('\n')}`)
  }
  const problems: string[] = []
  const seen = new Set<string>()
  const providers = parsed.data.providers.map((provider) => {
    if (seen.has(provider.id)) problems.push(`- provider "${provider.id}": the id is used twice`)
    seen.add(provider.id)
    if (new URL(provider.issuer).protocol === 'http:' && !provider.allowHttp) problems.push(`- provider "${provider.id}", field "issuer": must be https:// (set "allowHttp": true only for a provider on this machine)`)
    const secret = provider.clientSecretEnv ? env[provider.clientSecretEnv] : undefined
    if (provider.clientSecretEnv && !secret) problems.push(`- provider "${provider.id}": the environment variable ${provider.clientSecretEnv} (its client secret) is not set`)
    return secret ? { ...provider, clientSecret: secret } : { ...provider }
  })
  if (problems.length > 0) throw new OidcConfigError(`Invalid identity provider config (${source}):\n${problems.join('\n')}`)
  return providers
}

/** The providers in the file at `path` (none when `path` is empty). */
export function loadOidcProviders(path: string, env: Record<string, string | undefined> = process.env): OidcProviderConfig[] {
  if (path === '') return []
  const raw = readOperatorFile(path, { name: 'identity provider config', variable: 'NUXT_AUTH_OIDC_CONFIG_FILE' }, message => new OidcConfigError(message))
  return parseOidcProviders(raw, env, path)
}
