/**
 * Each role's limits: the configured defaults (`limits.roles` in the runtime config) with the
 * admin's changes on top (kept in the account store's settings, so every instance reads the same).
 * Read on every job start, so the effective table is cached for a few seconds: an admin's change
 * reaches this instance at once and the others within `CACHE_MS`.
 */
import type { Role } from '../../../shared/types/account'
import type { RoleLimitOverrides, RoleLimits, RoleLimitTable, RoleLimitsView } from '../../../shared/types/limits'
import { roleLimitOverridesBody } from '../../../shared/schemas/limits'
import type { SettingsReadWrite } from '../stores/settings/settings-store'
import type { EffectiveLimits, Group } from '../../../shared/types/groups'
import { mergeLimits } from './groups'


const SETTING = 'role-limits'
const CACHE_MS = 5_000
const ROLES: readonly Role[] = ['admin', 'user', 'guest']

/** Reads and changes the per-role limits. */
export class RoleLimitPolicy {
  private cached: { table: RoleLimitTable, overrides: RoleLimitOverrides, at: number } | undefined

  constructor(private readonly settings: SettingsReadWrite, private readonly defaults: RoleLimitTable, private readonly now: () => number = Date.now, private readonly groups?: { groupsOf(accountId: string): Promise<Group[]> }) {}

  /**
   * The limits `role` works under now; for person `userId` (an account), the most generous of
   * their role's and their groups' (see groups.ts).
   */
  async forRole(role: Role, userId?: string): Promise<RoleLimits> {
    const base = (await this.load()).table[role]
    if (!userId || role === 'guest' || !this.groups) return base
    const groups = await this.groups.groupsOf(userId)
    return groups.length === 0 ? base : mergeLimits(role, base, groups).limits
  }

  /** Person `userId`'s limits with where each comes from (the admin page). */
  async explain(role: Role, userId: string): Promise<EffectiveLimits> {
    const base = (await this.load()).table[role]
    return mergeLimits(role, base, role === 'guest' || !this.groups ? [] : await this.groups.groupsOf(userId))
  }

  /** Defaults, the admin's changes, and the result, for the admin page. */
  async view(): Promise<RoleLimitsView> {
    const { table, overrides } = await this.load()
    return { defaults: this.defaults, overrides, effective: table }
  }

  /** Replaces the admin's changes (a field left out goes back to its default). */
  async setOverrides(overrides: RoleLimitOverrides): Promise<RoleLimitsView> {
    const clean = roleLimitOverridesBody.parse(overrides)
    await this.settings.setSetting(SETTING, JSON.stringify(clean))
    this.cached = { overrides: clean, table: applyOverrides(this.defaults, clean), at: this.now() }
    return this.view()
  }

  private async load(): Promise<{ table: RoleLimitTable, overrides: RoleLimitOverrides }> {
    if (this.cached && this.now() - this.cached.at < CACHE_MS) return this.cached
    const overrides = parseStoredOverrides(await this.settings.getSetting(SETTING))
    this.cached = { overrides, table: applyOverrides(this.defaults, overrides), at: this.now() }
    return this.cached
  }
}

/** The defaults with `overrides` applied. */
export function applyOverrides(defaults: RoleLimitTable, overrides: RoleLimitOverrides): RoleLimitTable {
  const table = {} as RoleLimitTable
  for (const role of ROLES) table[role] = { ...defaults[role], ...overrides[role] }
  return table
}

/** A stored value that no longer parses (an older shape) counts as no changes rather than breaking every start. */
function parseStoredOverrides(stored: string | null): RoleLimitOverrides {
  if (!stored) return {}
  try {
    const parsed = roleLimitOverridesBody.safeParse(JSON.parse(stored))
    return parsed.success ? parsed.data : {}
  } catch {
    return {}
  }
}
