/**
 * Groups provisioned over SCIM: a SCIM Group is one of the server's groups (Admin → Groups, the
 * limits and tool rules it gives), named by its displayName, with a SCIM id of its own kept beside
 * it (an admin's group gets one when a provider first lists it). Its members given by the provider
 * are each account's `scim` groups (groups.ts); the group's record keeps who they are, so the
 * provider can read them back and a rename or a delete moves them. At most 10,000 members a group.
 */
import type { Group } from '../../../../shared/types/groups'
import { groupName } from '../../../../shared/schemas/limits'
import type { SettingsStore } from '../../stores/settings/settings-store'
import type { Groups } from '../groups'
import { parseScimFilter, type ScimComparison } from './scim-filter'
import { readScimPatch, scimText } from './scim-patch'
import { asScimError, ScimError, scimList, scimPage, SCIM_SCHEMAS, type ScimListQuery } from './scim-protocol'

interface ScimGroupRecord {
  name: string
  externalId?: string
  members: string[]
}

const IDS_KEY = 'scim-group-ids'
const recordKey = (id: string) => `scim-group:${id}`
const MAX_MEMBERS = 10_000
const FILTERABLE = new Set(['displayname', 'externalid', 'id', 'members.value'])

export interface ScimGroupParts {
  groups: Pick<Groups, 'list' | 'save' | 'remove' | 'rename' | 'changeScimMembership'>
  settings: Pick<SettingsStore, 'getSetting' | 'setSetting' | 'deleteSettings'>
  /** Whether an account of this id exists (members that are not are left out). */
  accountExists: (id: string) => Promise<boolean>
  /** Each member's display name, for the resource. */
  nameOf: (id: string) => Promise<string | null>
}

const notFound = (id: string) => new ScimError(404, `No group has the id ${id.slice(0, 100)}.`)

function nameFrom(value: unknown): string {
  const parsed = groupName.safeParse(value)
  if (!parsed.success) throw new ScimError(400, `displayName ${parsed.error.issues[0]?.message ?? 'is not a valid group name'}.`, 'invalidValue')
  return parsed.data
}

/** The account ids of a members value (`[{ value: id }]`), at most 1,000 at once. */
function memberIds(value: unknown): string[] {
  if (value === undefined || value === null) return []
  const list = Array.isArray(value) ? value : [value]
  if (list.length > 1_000) throw new ScimError(400, 'At most 1,000 members are changed at once.', 'tooMany')
  return list.map((member: { value?: unknown }) => scimText(member?.value, 'members.value'))
}

export class ScimGroups {
  constructor(private readonly parts: ScimGroupParts) {}

  async list(query: ScimListQuery, base: string) {
    const comparisons = query.filter ? parseScimFilter(query.filter) : []
    const unknown = comparisons.find(comparison => !FILTERABLE.has(comparison.path))
    if (unknown) throw new ScimError(400, `Groups are filtered by displayName, externalId, id and members[value eq …], not ${unknown.path}.`, 'invalidFilter')
    const all = await this.withIds()
    const matching = []
    for (const entry of all) if (await this.holds(entry, comparisons)) matching.push(entry)
    const page = scimPage(matching, query)
    return scimList(await Promise.all(page.map(entry => this.resource(entry.id, entry.group, base, query.withoutMembers))), matching.length, query.startIndex)
  }

  async get(id: string, base: string, withoutMembers = false) {
    const { group } = await this.find(id)
    return this.resource(id, group, base, withoutMembers)
  }

  async create(body: unknown, base: string) {
    const resource = (body ?? {}) as { displayName?: unknown, externalId?: unknown, members?: unknown }
    const name = nameFrom(resource.displayName)
    if ((await this.parts.groups.list()).some(group => group.name.toLowerCase() === name.toLowerCase())) throw new ScimError(409, `A group named ${name} exists.`, 'uniqueness')
    const group = await this.parts.groups.save(name, {})
    const id = crypto.randomUUID()
    await this.writeIds({ ...await this.ids(), [name.toLowerCase()]: id })
    await this.write(id, { name: group.name, ...(resource.externalId ? { externalId: scimText(resource.externalId, 'externalId') } : {}), members: [] })
    await this.setMembers(id, memberIds(resource.members), 'replace')
    return this.resource(id, group, base, false)
  }

  async replace(id: string, body: unknown, base: string) {
    const resource = (body ?? {}) as { displayName?: unknown, externalId?: unknown, members?: unknown }
    await this.find(id)
    await this.rename(id, nameFrom(resource.displayName))
    const record = await this.recordOf(id)
    await this.write(id, { ...record, externalId: resource.externalId ? scimText(resource.externalId, 'externalId') : undefined })
    await this.setMembers(id, memberIds(resource.members), 'replace')
    return this.get(id, base)
  }

  async patch(id: string, body: unknown, base: string) {
    await this.find(id)
    for (const operation of readScimPatch(body)) {
      if (operation.path === 'members') {
        const ids = operation.where ? [String(operation.where.value)] : memberIds(operation.value)
        // A remove of `members` with no value or filter removes them all.
        if (operation.op === 'remove') await this.setMembers(id, ids, operation.where || operation.value !== undefined ? 'remove' : 'replace')
        else await this.setMembers(id, ids, operation.op === 'add' ? 'add' : 'replace')
      } else if (operation.path === 'displayname') {
        await this.rename(id, nameFrom(operation.value))
      } else if (operation.path === 'externalid') {
        await this.write(id, { ...await this.recordOf(id), externalId: operation.op === 'remove' ? undefined : scimText(operation.value, 'externalId') })
      } else if (operation.path !== 'id' && !operation.path.startsWith('urn:')) {
        throw new ScimError(400, `A group's "${operation.path}" is not kept here: displayName, externalId and members are.`, 'invalidPath')
      }
    }
    return this.get(id, base)
  }

  async remove(id: string): Promise<void> {
    const { group } = await this.find(id)
    await this.setMembers(id, [], 'replace')
    await this.parts.groups.remove(group.name)
    const ids = await this.ids()
    delete ids[group.name.toLowerCase()]
    await this.writeIds(ids)
    await this.parts.settings.deleteSettings(recordKey(id))
  }

  /** The SCIM groups account `accountId` is in (for its User resource). */
  async groupsOf(accountId: string, scimNames: readonly string[]): Promise<Array<{ id: string, name: string }>> {
    if (scimNames.length === 0) return []
    const ids = await this.ids()
    const found = []
    for (const name of scimNames) {
      const id = ids[name.toLowerCase()]
      if (id && (await this.record(id))?.members.includes(accountId)) found.push({ id, name })
    }
    return found
  }

  /** Takes a deleted account out of its groups' member lists. */
  async forgetMember(accountId: string, scimNames: readonly string[]): Promise<void> {
    for (const { id } of await this.groupsOf(accountId, scimNames)) {
      const record = await this.recordOf(id)
      await this.write(id, { ...record, members: record.members.filter(member => member !== accountId) })
    }
  }

  /** Every group with its SCIM id (given now to a group that has none). */
  private async withIds(): Promise<Array<{ id: string, group: Group }>> {
    const [groups, ids] = await Promise.all([this.parts.groups.list(), this.ids()])
    let added = false
    const entries = groups.map((group) => {
      let id = ids[group.name.toLowerCase()]
      if (!id) {
        id = ids[group.name.toLowerCase()] = crypto.randomUUID()
        added = true
      }
      return { id, group }
    })
    if (added) await this.writeIds(ids)
    return entries
  }

  private async find(id: string): Promise<{ group: Group }> {
    const entry = id.length <= 100 ? (await this.withIds()).find(item => item.id === id) : undefined
    if (!entry) throw notFound(id)
    return { group: entry.group }
  }

  private async holds(entry: { id: string, group: Group }, comparisons: ScimComparison[]): Promise<boolean> {
    if (comparisons.length === 0) return true
    const record = await this.record(entry.id)
    return comparisons.every((comparison) => {
      const wanted = String(comparison.value)
      switch (comparison.path) {
        case 'displayname': return entry.group.name.toLowerCase() === wanted.toLowerCase()
        case 'id': return entry.id === wanted
        case 'externalid': return record?.externalId === wanted
        default: return Boolean(record?.members.includes(wanted))
      }
    })
  }

  /** Adds, removes or replaces the group's provisioned members, and each member's groups with them. */
  private async setMembers(id: string, ids: readonly string[], how: 'add' | 'remove' | 'replace'): Promise<void> {
    const record = await this.recordOf(id)
    const before = new Set(record.members)
    let after: Set<string>
    if (how === 'remove') after = new Set(record.members.filter(member => !ids.includes(member)))
    else {
      after = new Set(how === 'add' ? record.members : [])
      for (const member of ids) if (before.has(member) || await this.parts.accountExists(member)) after.add(member)
    }
    if (after.size > MAX_MEMBERS) throw new ScimError(400, `A group may have at most ${MAX_MEMBERS.toLocaleString('en')} provisioned members.`, 'tooMany')
    for (const member of after) if (!before.has(member)) await this.parts.groups.changeScimMembership(member, { add: [record.name] })
    for (const member of before) if (!after.has(member)) await this.parts.groups.changeScimMembership(member, { remove: [record.name] })
    await this.write(id, { ...record, members: [...after] })
  }

  /** Renames the group (its limits and settings kept) and moves its provisioned members with it. */
  private async rename(id: string, name: string): Promise<void> {
    const { group } = await this.find(id)
    if (group.name === name) return
    // Another group of that name: Groups refuses it (409), as SCIM's `uniqueness`.
    await asScimError(this.parts.groups.rename(group.name, name))
    const ids = await this.ids()
    delete ids[group.name.toLowerCase()]
    await this.writeIds({ ...ids, [name.toLowerCase()]: id })
    const record = await this.recordOf(id, group)
    for (const member of record.members) await this.parts.groups.changeScimMembership(member, { remove: [group.name], add: [name] })
    await this.write(id, { ...record, name })
  }

  private async ids(): Promise<Record<string, string>> {
    const raw = await this.parts.settings.getSetting(IDS_KEY)
    return raw ? JSON.parse(raw) as Record<string, string> : {}
  }

  private async writeIds(ids: Record<string, string>): Promise<void> {
    await this.parts.settings.setSetting(IDS_KEY, JSON.stringify(ids))
  }

  private async record(id: string): Promise<ScimGroupRecord | null> {
    const raw = await this.parts.settings.getSetting(recordKey(id))
    return raw ? JSON.parse(raw) as ScimGroupRecord : null
  }

  /** The group's record; none yet (an admin's group a provider has not changed): its name and no provisioned members. */
  private async recordOf(id: string, group?: Group): Promise<ScimGroupRecord> {
    return (await this.record(id)) ?? { name: (group ?? (await this.find(id)).group).name, members: [] }
  }

  private async write(id: string, record: ScimGroupRecord): Promise<void> {
    await this.parts.settings.setSetting(recordKey(id), JSON.stringify(record))
  }

  private async resource(id: string, group: Group, base: string, withoutMembers: boolean) {
    const record = await this.record(id)
    const members = withoutMembers ? undefined : await Promise.all((record?.members ?? []).map(async member => ({ value: member, display: await this.parts.nameOf(member) ?? member, $ref: `${base}/Users/${member}` })))
    const created = new Date(group.createdAt).toISOString()
    return {
      schemas: [SCIM_SCHEMAS.group],
      id,
      ...(record?.externalId ? { externalId: record.externalId } : {}),
      displayName: group.name,
      ...(members ? { members } : {}),
      meta: { resourceType: 'Group', created, lastModified: created, location: `${base}/Groups/${id}` },
    }
  }
}
