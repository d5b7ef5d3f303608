/**
 * People provisioned by an identity provider over SCIM: a SCIM User is an account (its `id`),
 * created without a password (the person signs in through the provider: an OIDC provider with
 * `linkByEmail` finds it by its name, the provider's userName), its SCIM attributes (userName,
 * externalId, name, e-mail) kept beside it in the settings store. An existing account is found by
 * its name too, so a provider matches the people who were here before it. `active: false`
 * disables the account: its sessions and API tokens end at once and its running answers and
 * workflow runs stop; DELETE deletes it with everything it owns.
 */
import type { Account } from '../../../../shared/types/account'
import { accountName } from '../../../../shared/schemas/account'
import { accountNameKey, type AccountStore, type StoredAccount } from '../../stores/accounts/account-store'
import type { SettingsStore } from '../../stores/settings/settings-store'
import { parseScimFilter, type ScimComparison } from './scim-filter'
import { readScimPatch, scimBoolean, scimText, type ScimPatchOperation } from './scim-patch'
import { ScimError, scimList, scimPage, SCIM_SCHEMAS, type ScimListQuery } from './scim-protocol'

/** The SCIM attributes of an account, beside it. */
interface ScimUserRecord {
  userName: string
  externalId?: string
  displayName?: string
  givenName?: string
  familyName?: string
  email?: string
}

/** What a create, replace or patch changes (undefined: unchanged; null: removed). */
type UserChange = { [K in keyof ScimUserRecord]?: ScimUserRecord[K] | null } & { active?: boolean }

const recordKey = (id: string) => `scim-user:${id}`
const nameKey = (userName: string) => `scim-user-name:${userName.toLowerCase()}`
const externalKey = (externalId: string) => `scim-user-external:${externalId}`

/** What provisioning people needs of the rest of the server. */
export interface ScimUserParts {
  accounts: Pick<AccountStore, 'createAccount' | 'getAccount' | 'findAccountByName' | 'listAccounts'>
  settings: Pick<SettingsStore, 'getSetting' | 'setSetting' | 'deleteSettings'>
  /** Disables (ending its sessions and tokens) or enables an account; a last admin is kept (409). */
  setDisabled: (id: string, disabled: boolean) => Promise<void>
  /** Stops the account's running answers and workflow runs. */
  stopJobs: (id: string) => Promise<void>
  /** Deletes the account with everything it owns. */
  deleteAccount: (id: string) => Promise<boolean>
  /** The SCIM groups the account is in. */
  groupsOf: (id: string) => Promise<Array<{ id: string, name: string }>>
  /** The role a provisioned account gets. */
  role: Account['role']
  /** The break-glass admin's name: never changed by provisioning. */
  breakGlassAdmin?: string
  /** Most accounts read for a list. */
  maxAccounts: number
}

const notFound = (id: string) => new ScimError(404, `No user has the id ${id.slice(0, 100)}.`)

/** The changes a User resource's attributes ask for (a POST or PUT body, or a PATCH's values). */
function changeOf(attribute: string, value: unknown, op: ScimPatchOperation['op'] = 'replace'): UserChange {
  const text = (name: string, max = 200) => (op === 'remove' || value === null || value === '' ? null : scimText(value, name, max))
  switch (attribute) {
    case 'username': return { userName: scimText(value, 'userName') }
    case 'externalid': return { externalId: text('externalId') }
    case 'displayname': return { displayName: text('displayName') }
    case 'name.givenname': return { givenName: text('name.givenName') }
    case 'name.familyname': return { familyName: text('name.familyName') }
    case 'name.formatted': return op === 'remove' ? { displayName: null } : { displayName: text('name.formatted') }
    case 'name': {
      const name = (value ?? {}) as Record<string, unknown>
      return op === 'remove' ? { givenName: null, familyName: null } : { ...(name.givenName !== undefined ? changeOf('name.givenname', name.givenName) : {}), ...(name.familyName !== undefined ? changeOf('name.familyname', name.familyName) : {}) }
    }
    case 'emails': {
      if (op === 'remove') return { email: null }
      const emails = Array.isArray(value) ? value as Array<{ value?: unknown, primary?: unknown }> : []
      const chosen = emails.find(email => email?.primary === true || email?.primary === 'True') ?? emails[0]
      return { email: chosen?.value === undefined ? null : scimText(chosen.value, 'emails.value', 320) }
    }
    case 'active': return op === 'remove' ? {} : { active: scimBoolean(value, 'active') }
    // Read-only, or not kept (groups are changed through /Groups).
    case 'id': case 'meta': case 'schemas': case 'groups': case 'password': return {}
    default:
      if (attribute.startsWith('urn:') || attribute.startsWith('addresses') || attribute.startsWith('phonenumbers') || attribute === 'title' || attribute === 'preferredlanguage' || attribute === 'locale' || attribute === 'timezone' || attribute === 'nickname' || attribute === 'usertype') return {}
      throw new ScimError(400, `The attribute "${attribute}" is not kept here.`, 'invalidPath')
  }
}

/** The changes of a whole User resource (POST, PUT). */
function resourceChange(body: unknown): UserChange {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw new ScimError(400, 'A User is a JSON object.', 'invalidSyntax')
  const change: UserChange = {}
  for (const [key, value] of Object.entries(body as Record<string, unknown>)) Object.assign(change, changeOf(key.toLowerCase(), value))
  return change
}

export class ScimUsers {
  constructor(private readonly parts: ScimUserParts) {}

  async list(query: ScimListQuery, base: string) {
    const comparisons = query.filter ? parseScimFilter(query.filter) : []
    const accounts = comparisons.length > 0 ? await this.matching(comparisons) : await this.parts.accounts.listAccounts(this.parts.maxAccounts)
    const page = scimPage(accounts, query)
    return scimList(await Promise.all(page.map(account => this.resource(account, base))), accounts.length, query.startIndex)
  }

  async get(id: string, base: string) {
    return this.resource(await this.account(id), base)
  }

  async create(body: unknown, base: string) {
    const change = resourceChange(body)
    if (!change.userName) throw new ScimError(400, 'userName is required.', 'invalidValue')
    const name = accountName.safeParse(change.userName)
    if (!name.success) throw new ScimError(400, `userName ${name.error.issues[0]?.message ?? 'is not a valid account name'} (it is the person's account name here).`, 'invalidValue')
    if (await this.findByUserName(change.userName)) throw new ScimError(409, `A user named ${change.userName} exists.`, 'uniqueness')
    if (change.externalId && await this.findByExternalId(change.externalId)) throw new ScimError(409, `A user has the externalId ${change.externalId}.`, 'uniqueness')
    const account = await this.parts.accounts.createAccount({ name: name.data, passwordHash: '', role: this.parts.role })
    if (!account) throw new ScimError(409, `A user named ${change.userName} exists.`, 'uniqueness')
    await this.apply(account, null, change)
    return this.resource(await this.account(account.id), base)
  }

  async replace(id: string, body: unknown, base: string) {
    const account = await this.account(id)
    const change = resourceChange(body)
    if (!change.userName) throw new ScimError(400, 'userName is required.', 'invalidValue')
    // A replace sets what it leaves out to nothing.
    const whole: UserChange = { externalId: null, displayName: null, givenName: null, familyName: null, email: null, ...change }
    await this.apply(account, await this.record(id), whole)
    return this.resource(await this.account(id), base)
  }

  async patch(id: string, body: unknown, base: string) {
    const account = await this.account(id)
    const change: UserChange = {}
    for (const operation of readScimPatch(body)) {
      // `emails[type eq "work"].value`: the person's one e-mail.
      const value = operation.path === 'emails' && operation.sub === 'value' ? [{ value: operation.value, primary: true }] : operation.value
      Object.assign(change, changeOf(operation.path, value, operation.op))
    }
    await this.apply(account, await this.record(id), change)
    return this.resource(await this.account(id), base)
  }

  async remove(id: string): Promise<void> {
    const account = await this.account(id)
    this.guard(account)
    const record = await this.record(id)
    if (!await this.parts.deleteAccount(id)) throw notFound(id)
    await this.forget(id, record)
  }

  /** The accounts every comparison holds for (looked up by the first that names one). */
  private async matching(comparisons: ScimComparison[]): Promise<StoredAccount[]> {
    const first = comparisons[0]!
    const value = typeof first.value === 'string' ? first.value : ''
    let found: StoredAccount | null
    if (first.path === 'username') found = await this.findByUserName(value)
    else if (first.path === 'externalid') found = await this.findByExternalId(value)
    else if (first.path === 'id') found = await this.parts.accounts.getAccount(value)
    else throw new ScimError(400, `Users are looked up by userName, externalId or id, not ${first.path}.`, 'invalidFilter')
    if (!found) return []
    const record = await this.record(found.id)
    const holds = (comparison: ScimComparison) => {
      const wanted = typeof comparison.value === 'string' ? comparison.value : String(comparison.value)
      switch (comparison.path) {
        case 'username': return (record?.userName ?? found!.name).toLowerCase() === wanted.toLowerCase()
        case 'externalid': return record?.externalId === wanted
        case 'id': return found!.id === wanted
        case 'active': return comparison.value === !found!.disabled
        default: throw new ScimError(400, `Users are filtered by userName, externalId, id and active, not ${comparison.path}.`, 'invalidFilter')
      }
    }
    return comparisons.every(holds) ? [found] : []
  }

  private async findByUserName(userName: string): Promise<StoredAccount | null> {
    const id = await this.parts.settings.getSetting(nameKey(userName))
    if (id) return this.parts.accounts.getAccount(id)
    const account = await this.parts.accounts.findAccountByName(userName)
    // An account renamed by provisioning is found by its userName only.
    return account && !(await this.record(account.id)) ? account : null
  }

  private async findByExternalId(externalId: string): Promise<StoredAccount | null> {
    const id = await this.parts.settings.getSetting(externalKey(externalId))
    return id ? this.parts.accounts.getAccount(id) : null
  }

  private async account(id: string): Promise<StoredAccount> {
    const account = id.length <= 200 ? await this.parts.accounts.getAccount(id) : null
    if (!account) throw notFound(id)
    return account
  }

  private async record(id: string): Promise<ScimUserRecord | null> {
    const raw = await this.parts.settings.getSetting(recordKey(id))
    return raw ? JSON.parse(raw) as ScimUserRecord : null
  }

  private guard(account: StoredAccount): void {
    if (this.parts.breakGlassAdmin && accountNameKey(account.name) === accountNameKey(this.parts.breakGlassAdmin)) {
      throw new ScimError(403, `${account.name} is this server's break-glass admin: provisioning does not change it.`)
    }
  }

  /** Writes `change` over the account's SCIM attributes (and its indexes), and its active state. */
  private async apply(account: StoredAccount, before: ScimUserRecord | null, change: UserChange): Promise<void> {
    this.guard(account)
    const { active, ...attributes } = change
    const record: ScimUserRecord = { ...(before ?? { userName: account.name }) }
    for (const [key, value] of Object.entries(attributes) as Array<[keyof ScimUserRecord, string | null | undefined]>) {
      if (value === null) delete record[key]
      else if (value !== undefined) record[key] = value
    }
    if (record.userName.toLowerCase() !== (before?.userName ?? account.name).toLowerCase()) {
      const holder = await this.findByUserName(record.userName)
      if (holder && holder.id !== account.id) throw new ScimError(409, `A user named ${record.userName} exists.`, 'uniqueness')
    }
    if (record.externalId && record.externalId !== before?.externalId) {
      const holder = await this.findByExternalId(record.externalId)
      if (holder && holder.id !== account.id) throw new ScimError(409, `A user has the externalId ${record.externalId}.`, 'uniqueness')
    }
    if (before) await this.unindex(account.id, before)
    await this.parts.settings.setSetting(recordKey(account.id), JSON.stringify(record))
    await this.parts.settings.setSetting(nameKey(record.userName), account.id)
    if (record.externalId) await this.parts.settings.setSetting(externalKey(record.externalId), account.id)
    if (active !== undefined && active === account.disabled) {
      // Jobs stop before the account is disabled: a crash between the two leaves it active, so the
      // provider's retry does both again (the other order would leave its jobs running for good).
      if (!active) await this.parts.stopJobs(account.id)
      await this.parts.setDisabled(account.id, !active)
    }
  }

  /** Removes the index entries of `record` that still point at `id` (an empty value is none: the store deletes by prefix only). */
  private async unindex(id: string, record: ScimUserRecord): Promise<void> {
    for (const key of [nameKey(record.userName), ...(record.externalId ? [externalKey(record.externalId)] : [])]) {
      if (await this.parts.settings.getSetting(key) === id) await this.parts.settings.setSetting(key, '')
    }
  }

  private async forget(id: string, record: ScimUserRecord | null): Promise<void> {
    if (record) await this.unindex(id, record)
    await this.parts.settings.deleteSettings(recordKey(id))
  }

  private async resource(account: StoredAccount, base: string) {
    const [record, groups] = await Promise.all([this.record(account.id), this.parts.groupsOf(account.id)])
    const created = new Date(account.createdAt).toISOString()
    return {
      schemas: [SCIM_SCHEMAS.user],
      id: account.id,
      ...(record?.externalId ? { externalId: record.externalId } : {}),
      userName: record?.userName ?? account.name,
      name: { ...(record?.givenName ? { givenName: record.givenName } : {}), ...(record?.familyName ? { familyName: record.familyName } : {}), ...(record?.displayName ? { formatted: record.displayName } : {}) },
      displayName: record?.displayName ?? account.name,
      emails: record?.email ? [{ value: record.email, type: 'work', primary: true }] : [],
      active: !account.disabled,
      groups: groups.map(group => ({ value: group.id, display: group.name, $ref: `${base}/Groups/${group.id}` })),
      meta: { resourceType: 'User', created, lastModified: created, location: `${base}/Users/${account.id}` },
    }
  }
}
