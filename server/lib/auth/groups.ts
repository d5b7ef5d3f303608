/**
 * Groups: made by an admin, with the limits each gives its members, and who is in which — put
 * there by an admin, or by the identity provider's groups claim at each sign-in (a claim value
 * counts when a group of that name exists). Kept in the account store's settings, so every backend
 * and instance reads the same; a person's groups are cached for a few seconds, as role limits are.
 */
import { LRUCache } from 'lru-cache'
import type { Role } from '../../../shared/types/account'
import type { EffectiveLimits, Group, GroupMembership, TeamChatSettings } from '../../../shared/types/groups'
import type { RoleLimits } from '../../../shared/types/limits'
import { groupBody, groupName } from '../../../shared/schemas/limits'
import type { SettingsStore } from '../stores/settings/settings-store'
import { SettingLocks } from '../stores/settings/setting-locks'
import { AuthError } from './auth-errors'

const GROUPS = 'groups'
const memberKey = (accountId: string) => `account-groups:${accountId}`
const CACHE_MS = 5_000
/** Groups a server keeps at most. */
export const MAX_GROUPS = 200

/** Limits where 0 means "no limit": 0 is the most generous. */
const ZERO_IS_UNLIMITED = new Set<keyof RoleLimits>(['dailyTokens', 'dailyCost', 'maxOutputTokens'])

/** Whether `candidate` gives more than `current` for `field`. */
function moreGenerous(field: keyof RoleLimits, current: number, candidate: number): boolean {
  if (ZERO_IS_UNLIMITED.has(field)) return current !== 0 && (candidate === 0 || candidate > current)
  return candidate > current
}

/** The union of two model lists (`*`: any). */
function unionModels(current: string, extra: string): string {
  if (current === '*' || extra === '*') return '*'
  return [...new Set([...current.split(','), ...extra.split(',')].map(item => item.trim()).filter(Boolean))].join(',')
}

/** `base` (a role's limits) with each group's on top, the most generous of them per field, and where each came from. */
export function mergeLimits(role: Role, base: RoleLimits, groups: readonly Group[]): EffectiveLimits {
  const limits = { ...base }
  const sources = Object.fromEntries(Object.keys(base).map(field => [field, `role:${role}`])) as EffectiveLimits['sources']
  let modelSources = [`role:${role}`]
  for (const group of groups) {
    for (const [field, value] of Object.entries(group.limits) as Array<[keyof RoleLimits, RoleLimits[keyof RoleLimits]]>) {
      if (value === undefined) continue
      if (field === 'models') {
        const merged = unionModels(limits.models, value as string)
        if (merged === limits.models) continue
        // Any model: that group alone says so; else each list that added models.
        modelSources = merged === '*' ? [`group:${group.name}`] : [...modelSources, `group:${group.name}`]
        limits.models = merged
      } else if (moreGenerous(field, limits[field] as number, value as number)) {
        (limits[field] as number) = value as number
        sources[field] = `group:${group.name}`
      }
    }
  }
  sources.models = modelSources.join(' + ')
  return { limits, sources, groups: groups.map(group => group.name) }
}

/** A group deleted, or renamed (what is kept under its name follows it). */
export type GroupChange = { removed: string } | { renamed: string, to: string }

/** Groups and their members. */
export class Groups {
  private readonly listeners: Array<(change: GroupChange) => Promise<void>> = []
  private readonly membership = new LRUCache<string, string[]>({ max: 10_000, ttl: CACHE_MS })
  private cachedGroups: { groups: Group[], at: number } | undefined
  /** Every change is a read, a change and a write: under a lock, so two admins (or an admin and a sign-in) at once both count. */
  private readonly locks: SettingLocks

  constructor(private readonly settings: Pick<SettingsStore, 'getSetting' | 'setSetting' | 'deleteSettings' | 'tryLock' | 'unlock'>, private readonly now: () => number = Date.now) {
    this.locks = new SettingLocks(settings, crypto.randomUUID(), { ttlMs: 10_000, attempts: 80, now, busyMessage: 'Groups are being changed elsewhere; try again in a moment.' })
  }

  async list(): Promise<Group[]> {
    if (this.cachedGroups && this.now() - this.cachedGroups.at < CACHE_MS) return this.cachedGroups.groups
    return this.read()
  }

  /** The group named `name` (any case), or undefined. */
  async named(name: string): Promise<Group | undefined> {
    const wanted = name.trim().toLowerCase()
    return (await this.list()).find(group => group.name.toLowerCase() === wanted)
  }

  /** The groups as stored now (not from the cache). */
  private async read(): Promise<Group[]> {
    let groups: Group[] = []
    try {
      const stored = JSON.parse(await this.settings.getSetting(GROUPS) ?? '[]') as unknown
      if (Array.isArray(stored)) groups = stored.filter((item): item is Group => typeof item?.name === 'string' && typeof item?.limits === 'object')
    } catch {
      // An unreadable value counts as no groups rather than breaking every start.
    }
    this.cachedGroups = { groups, at: this.now() }
    return groups
  }

  /** Creates or changes group `name`; 409 past the most groups a server keeps. */
  async save(name: string, body: unknown): Promise<Group> {
    const clean = groupName.parse(name)
    const { description, limits, defaultModel, instructions } = groupBody.parse(body)
    return this.locks.run(GROUPS, async () => {
      const groups = await this.read()
      const existing = groups.find(group => group.name.toLowerCase() === clean.toLowerCase())
      if (!existing && groups.length >= MAX_GROUPS) throw new AuthError('too-many-groups', `This server keeps at most ${MAX_GROUPS} groups. Delete one first.`)
      const group: Group = { name: existing?.name ?? clean, description, limits, ...(defaultModel ? { defaultModel } : {}), ...(instructions ? { instructions } : {}), createdAt: existing?.createdAt ?? this.now() }
      await this.write(existing ? groups.map(item => (item === existing ? group : item)) : [...groups, group])
      return group
    })
  }

  /** Deletes group `name` (its members keep their other groups); false when there is none. */
  async remove(name: string): Promise<boolean> {
    const removed = await this.locks.run(GROUPS, async () => {
      const groups = await this.read()
      const gone = groups.find(group => group.name.toLowerCase() === name.trim().toLowerCase())
      if (gone) await this.write(groups.filter(group => group !== gone))
      return gone
    })
    if (removed) await this.tell({ removed: removed.name })
    return removed !== undefined
  }

  /** Renames group `from` to `to`, keeping what it gives; 409 when another group has that name, false when there is no `from`. */
  async rename(from: string, to: string): Promise<boolean> {
    const clean = groupName.parse(to)
    const renamed = await this.locks.run(GROUPS, async () => {
      const groups = await this.read()
      const group = groups.find(item => item.name.toLowerCase() === from.toLowerCase())
      if (!group) return undefined
      if (groups.some(item => item !== group && item.name.toLowerCase() === clean.toLowerCase())) throw new AuthError('name-taken', `A group named ${clean} exists.`)
      await this.write(groups.map(item => (item === group ? { ...group, name: clean } : item)))
      return group.name
    })
    if (renamed && renamed !== clean) await this.tell({ renamed, to: clean })
    return renamed !== undefined
  }

  /** Calls `listener` after each group is deleted or renamed (credentials kept for a group follow it). */
  onChanged(listener: (change: GroupChange) => Promise<void>): void {
    this.listeners.push(listener)
  }

  private async tell(change: GroupChange): Promise<void> {
    for (const listener of this.listeners) await listener(change)
  }

  /** Where `accountId`'s groups come from (names as stored, existing or not). */
  async membershipOf(accountId: string): Promise<GroupMembership> {
    try {
      const stored = JSON.parse(await this.settings.getSetting(memberKey(accountId)) ?? '{}') as Partial<GroupMembership>
      const list = (value: unknown) => (Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [])
      return { manual: list(stored.manual), provider: list(stored.provider), scim: list(stored.scim) }
    } catch {
      return { manual: [], provider: [], scim: [] }
    }
  }

  /** The groups `accountId` is in now: its manual and provider groups that exist. */
  async groupsOf(accountId: string): Promise<Group[]> {
    const groups = await this.list()
    if (groups.length === 0) return []
    let names = this.membership.get(accountId)
    if (!names) {
      const { manual, provider, scim } = await this.membershipOf(accountId)
      names = [...new Set([...manual, ...provider, ...scim].map(item => item.toLowerCase()))]
      this.membership.set(accountId, names)
    }
    return groups.filter(group => names.includes(group.name.toLowerCase()))
  }

  /** What `accountId`'s groups set for their chats: the first default model (by group name), every group's instructions. */
  async chatSettingsOf(accountId: string): Promise<TeamChatSettings> {
    const groups = (await this.groupsOf(accountId)).sort((a, b) => a.name.localeCompare(b.name))
    const defaultModel = groups.find(group => group.defaultModel)?.defaultModel
    const told = groups.filter(group => group.instructions)
    const instructions = told.length === 1 ? told[0]!.instructions : told.map(group => `From the group ${group.name}:\n${group.instructions}`).join('\n\n')
    return { ...(defaultModel ? { defaultModel } : {}), ...(instructions ? { instructions } : {}) }
  }

  /** An admin puts `accountId` in `names` (replacing the groups an admin gave before); 400 for a group that does not exist. */
  async setManual(accountId: string, names: readonly string[]): Promise<GroupMembership> {
    // As stored now: a group another instance made a moment ago counts.
    const groups = await this.read()
    const unknown = names.filter(name => !groups.some(group => group.name.toLowerCase() === name.toLowerCase()))
    if (unknown.length > 0) throw new AuthError('unknown-group', `No group is named ${unknown.map(name => `"${name}"`).join(', ')}. Create it first.`)
    return this.locks.run(memberKey(accountId), async () => this.writeMembership(accountId, { ...await this.membershipOf(accountId), manual: [...new Set(names)] }))
  }

  /** The groups claim of `accountId`'s provider at sign-in (bounded; unknown names are kept for when such a group is made). */
  async setFromProvider(accountId: string, names: readonly string[]): Promise<void> {
    const clean = [...new Set(names.map(name => name.trim()).filter(name => groupName.safeParse(name).success))].slice(0, 100)
    if ((await this.membershipOf(accountId)).provider.join('\n') === clean.join('\n')) return
    await this.locks.run(memberKey(accountId), async () => this.writeMembership(accountId, { ...await this.membershipOf(accountId), provider: clean }))
  }

  /** Provisioning (SCIM) adds `accountId` to the groups `add` names and takes it out of those `remove` names. */
  async changeScimMembership(accountId: string, change: { add?: readonly string[], remove?: readonly string[] }): Promise<void> {
    const removed = new Set((change.remove ?? []).map(name => name.toLowerCase()))
    await this.locks.run(memberKey(accountId), async () => {
      const membership = await this.membershipOf(accountId)
      const kept = membership.scim.filter(name => !removed.has(name.toLowerCase()))
      const scim = [...new Map([...kept, ...change.add ?? []].map(name => [name.toLowerCase(), name])).values()].slice(0, 200)
      if (scim.join('\n') !== membership.scim.join('\n')) await this.writeMembership(accountId, { ...membership, scim })
    })
  }

  /** Forgets `accountId`'s groups (its account was deleted). */
  async forget(accountId: string): Promise<void> {
    await this.settings.deleteSettings(memberKey(accountId))
    this.membership.delete(accountId)
  }

  private async writeMembership(accountId: string, membership: GroupMembership): Promise<GroupMembership> {
    await this.settings.setSetting(memberKey(accountId), JSON.stringify(membership))
    this.membership.delete(accountId)
    return membership
  }

  private async write(groups: Group[]): Promise<void> {
    await this.settings.setSetting(GROUPS, JSON.stringify(groups))
    this.cachedGroups = { groups, at: this.now() }
  }
}
