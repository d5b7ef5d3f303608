/**
 * Credentials tools use (`context.credentials.get('github', 'token')`): server-wide (the
 * operator's credentials file, `tools.credentialsFile`), an admin's for everyone, an admin's for a
 * group (shared by its members), and each user's own (entered in Settings). A call sees its own
 * user's values, else their groups' (by group name), else everyone's, else the server-wide ones;
 * never another user's.
 *
 * Per-user values are kept in the account store's settings, one sealed blob per user
 * (AES-256-GCM under a key derived from the server secret, like the job API keys): the store
 * never holds them in plain text, they are never returned after saving (only which keys are
 * set), never logged, and deleted with the user.
 */
import { readOperatorFile } from '../../config/operator-file'
import { z } from 'zod'
import type { SecretBox } from '../../security/secret-box'
import type { SettingsStore } from '../../stores/settings/settings-store'
import type { ToolCredentials } from '../tool-types'
import type { CredentialService } from '../../../../shared/types/credentials'
import { DomainError, type HttpAnswer } from '../../domain-error'

const SETTING_PREFIX = 'credentials:'
/** Services one user may keep, keys per service, and characters per value. */
export const CREDENTIAL_LIMITS = { services: 50, keysPerService: 10, valueChars: 8_192 } as const

const NAME = /^[a-z0-9_-]{1,40}$/
const nameSchema = z.string().regex(NAME, 'must be 1-40 lowercase letters, digits, "_" or "-"')

/** `{ "<service>": { "<key>": "<value>" } }`, bounded. */
const credentialMapSchema = z.record(nameSchema, z.record(nameSchema, z.string().min(1).max(CREDENTIAL_LIMITS.valueChars))
  .refine(keys => Object.keys(keys).length <= CREDENTIAL_LIMITS.keysPerService, `at most ${CREDENTIAL_LIMITS.keysPerService} keys per service`))
  .refine(services => Object.keys(services).length <= CREDENTIAL_LIMITS.services, `at most ${CREDENTIAL_LIMITS.services} services`)

type CredentialMap = Record<string, Record<string, string>>

/** A change a user cannot make, with what to fix (answered 400). */
export class CredentialInputError extends DomainError {
  override name = 'CredentialInputError'
  httpAnswer(): HttpAnswer {
    return { statusCode: 400, statusMessage: 'Invalid credential', message: this.message }
  }

  static isInstance(error: unknown): error is CredentialInputError {
    return error instanceof Error && error.name === 'CredentialInputError'
  }
}

/** Reads the operator's server-wide credentials (`.yaml`/`.yml` as YAML, anything else as JSON). */
export function loadCredentialsFile(path: string): CredentialMap {
  const raw = readOperatorFile(path, { name: 'credentials file', variable: 'NUXT_TOOLS_CREDENTIALS_FILE' })
  const parsed = credentialMapSchema.safeParse(raw)
  if (!parsed.success) {
    // Values are never echoed: only where the problem is.
    throw new Error(`Invalid credentials file ${path}: ${parsed.error.issues.map(issue => `${issue.path.map(String).join('/') || 'the file'}: ${issue.message}`).join('; ')}`)
  }
  return parsed.data
}

/** What the vault needs. */
export interface CredentialVaultOptions {
  settings: Pick<SettingsStore, 'getSetting' | 'setSetting' | 'deleteSettings'>
  secretBox: SecretBox
  /** The operator's server-wide values. */
  serverWide: CredentialMap
  /** The services and keys tools ask for now (for Settings to list), with the tools that need them. */
  needs: () => Array<{ tool: string, need: string }>
  /** The groups a user is in (their values shared with the group come after their own). */
  groupsOf?: (userId: string) => Promise<readonly string[]>
}

/** Where an admin's values "for everyone" are kept: a scope beside the users' (not a user id any account can have). */
export const EVERYONE = '*everyone'
/** Where an admin's values for group `name` are kept (names compared case-insensitively). */
const groupScope = (name: string) => `*group:${name.toLowerCase()}`
const isGroupScope = (scope: string) => scope.startsWith('*group:')

/** A layer of values below a scope's own, and how `describe` says a key set there. */
interface Layer { values: CredentialMap, set: 'group' | 'everyone' | 'server', group?: string }

export class CredentialVault {
  constructor(private readonly options: CredentialVaultOptions) {}

  /** The operator's server-wide values alone (they fill MCP placeholders for a shared connection). */
  serverWide(): ToolCredentials {
    const { serverWide } = this.options
    return { get: (service, key) => serverWide[service]?.[key], has: service => Object.keys(serverWide[service] ?? {}).length > 0 }
  }

  /** What a call of `userId` may use: their own values, else their groups' (by name), else an admin's for everyone, else the operator's. */
  async forUser(userId: string): Promise<ToolCredentials> {
    const [own, below] = await Promise.all([this.read(userId), this.layersBelow(userId)])
    const layers = [own, ...below.map(layer => layer.values)]
    return {
      get: (service, key) => layers.map(layer => layer[service]?.[key]).find(value => value !== undefined),
      has: service => layers.some(layer => Object.keys(layer[service] ?? {}).length > 0),
    }
  }

  /**
   * Every service tools ask for or `scope` has set, with which keys are set where (never the
   * values): `mine`, `group` (an admin's for one of the person's groups, named), `everyone` (an
   * admin's for everyone), `server` (the operator's), or null. For `EVERYONE` or a group's scope,
   * the admin's view of those values (their own set as `everyone` or `group`).
   */
  async describe(scope: string): Promise<CredentialService[]> {
    const [own, below] = await Promise.all([this.read(scope), this.layersBelow(scope)])
    const ownSet = scope === EVERYONE ? 'everyone' as const : isGroupScope(scope) ? 'group' as const : 'mine' as const
    const services = new Map<string, { keys: Set<string>, tools: Set<string> }>()
    const entry = (service: string) => services.get(service) ?? services.set(service, { keys: new Set(), tools: new Set() }).get(service)!
    for (const { tool, need } of this.options.needs()) {
      const [service, key] = need.split('/') as [string, string | undefined]
      const item = entry(service)
      item.tools.add(tool)
      if (key) item.keys.add(key)
    }
    for (const [service, keys] of Object.entries(own)) for (const key of Object.keys(keys)) entry(service).keys.add(key)
    // Keys set below show where they are set (their values never leave the server).
    for (const [service, item] of services) for (const layer of below) for (const key of Object.keys(layer.values[service] ?? {})) item.keys.add(key)
    return [...services.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([service, { keys, tools }]) => ({
      service,
      tools: [...tools].sort(),
      keys: [...keys].sort().map((key) => {
        if (own[service]?.[key] !== undefined) return { key, set: ownSet }
        const layer = below.find(item => item.values[service]?.[key] !== undefined)
        return { key, set: layer?.set ?? null, ...(layer?.group ? { group: layer.group } : {}) }
      }),
    }))
  }

  /** The layers a scope's own values come before: a person's groups', everyone's (not for everyone itself), the operator's. */
  private async layersBelow(scope: string): Promise<Layer[]> {
    const person = scope !== EVERYONE && !isGroupScope(scope)
    const groups = person && this.options.groupsOf ? [...await this.options.groupsOf(scope)].sort((a, b) => a.localeCompare(b)) : []
    const [everyone, ...ofGroups] = await Promise.all([scope === EVERYONE ? {} as CredentialMap : this.read(EVERYONE), ...groups.map(group => this.read(groupScope(group)))])
    return [
      ...groups.map((group, index) => ({ values: ofGroups[index]!, set: 'group' as const, group })),
      { values: everyone!, set: 'everyone' as const },
      { values: this.options.serverWide, set: 'server' as const },
    ]
  }

  /** Sets the user's values for `service` (other keys of it are kept; an empty value removes its key). */
  async set(userId: string, service: string, values: Record<string, string>): Promise<CredentialService[]> {
    const own = await this.read(userId)
    const next: CredentialMap = { ...own, [service]: { ...own[service] } }
    for (const [key, value] of Object.entries(values)) {
      if (value === '') delete next[service]![key]
      else next[service]![key] = value
    }
    if (Object.keys(next[service]!).length === 0) delete next[service]
    const parsed = credentialMapSchema.safeParse(next)
    if (!parsed.success) throw new CredentialInputError(parsed.error.issues.map(issue => `${issue.path.map(String).join('/') || 'credentials'}: ${issue.message}`).join('; '))
    await this.write(userId, parsed.data)
    return this.describe(userId)
  }

  /** Removes the user's values for `service`. */
  async remove(userId: string, service: string): Promise<CredentialService[]> {
    const own = await this.read(userId)
    delete own[service]
    await this.write(userId, own)
    return this.describe(userId)
  }

  /** The admin's view of the values for everyone. */
  describeForEveryone(): Promise<CredentialService[]> {
    return this.describe(EVERYONE)
  }

  /** Sets values for everyone (an admin's): used by anyone who has not set their own. */
  setForEveryone(service: string, values: Record<string, string>): Promise<CredentialService[]> {
    return this.set(EVERYONE, service, values)
  }

  /** Removes the values for everyone of `service`. */
  removeForEveryone(service: string): Promise<CredentialService[]> {
    return this.remove(EVERYONE, service)
  }

  /** An admin's view of the values for group `name`. */
  describeForGroup(name: string): Promise<CredentialService[]> {
    return this.describe(groupScope(name))
  }

  /** Sets values for group `name` (an admin's): used by its members who have not set their own. */
  setForGroup(name: string, service: string, values: Record<string, string>): Promise<CredentialService[]> {
    return this.set(groupScope(name), service, values)
  }

  /** Removes the values for group `name` of `service`. */
  removeForGroup(name: string, service: string): Promise<CredentialService[]> {
    return this.remove(groupScope(name), service)
  }

  /** Follows a group's change: its values go with it when it is deleted, and move with a rename. */
  async groupChanged(change: { removed: string } | { renamed: string, to: string }): Promise<void> {
    const from = 'removed' in change ? change.removed : change.renamed
    if ('to' in change && from.toLowerCase() !== change.to.toLowerCase()) await this.write(groupScope(change.to), await this.read(groupScope(from)))
    if (!('to' in change) || from.toLowerCase() !== change.to.toLowerCase()) await this.write(groupScope(from), {})
  }

  /** Deletes everything the user saved (their account is being deleted). */
  async deleteUser(userId: string): Promise<void> {
    await this.options.settings.deleteSettings(SETTING_PREFIX + userId)
  }

  private async read(userId: string): Promise<CredentialMap> {
    const sealed = await this.options.settings.getSetting(SETTING_PREFIX + userId)
    if (!sealed) return {}
    const opened = this.options.secretBox.open(sealed)
    if (opened === undefined) return {}
    const parsed = credentialMapSchema.safeParse(JSON.parse(opened))
    return parsed.success ? parsed.data : {}
  }

  private async write(userId: string, values: CredentialMap): Promise<void> {
    await this.options.settings.setSetting(SETTING_PREFIX + userId, Object.keys(values).length === 0 ? '' : this.options.secretBox.seal(JSON.stringify(values)))
  }
}
