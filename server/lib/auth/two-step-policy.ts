/**
 * An admin can require two-step sign-in (`off`, `admins`, `everyone`): an account it applies to
 * (its role, and it signs in with a password here: an identity provider asks for its own second
 * step) and that has not set it up may, once signed in, only set it up (or sign out): every other
 * request answers 403 `two-step-required` until it has. Existing sessions are held the same way the
 * moment the admin turns it on. API tokens, made by a person already signed in, go on working.
 *
 * Read on every request of an account, so both answers are kept for a few seconds (the requirement
 * for all, each account's state per account); setting either here forgets it at once, another
 * instance sees it within that time.
 */
import { LRUCache } from 'lru-cache'
import type { Role } from '../../../shared/types/account'
import type { SettingsReadWrite } from '../stores/settings/settings-store'

export type TwoStepRequirement = 'off' | 'admins' | 'everyone'
export const TWO_STEP_REQUIREMENTS: readonly TwoStepRequirement[] = ['off', 'admins', 'everyone']

const SETTING = 'two-step-required'
const CACHE_MS = 5_000

export class TwoStepPolicy {
  private readonly pendingOf = new LRUCache<string, boolean>({ max: 10_000, ttl: CACHE_MS })
  private cached: { value: TwoStepRequirement, at: number } | undefined

  constructor(
    private readonly settings: SettingsReadWrite,
    private readonly account: { hasPassword: (userId: string) => Promise<boolean>, twoStepOn: (userId: string) => Promise<boolean> },
    private readonly now: () => number = Date.now,
  ) {}

  /** What the admin requires (`off` until they set it). */
  async requirement(): Promise<TwoStepRequirement> {
    if (this.cached && this.now() - this.cached.at < CACHE_MS) return this.cached.value
    const stored = await this.settings.getSetting(SETTING)
    const value = TWO_STEP_REQUIREMENTS.includes(stored as TwoStepRequirement) ? stored as TwoStepRequirement : 'off'
    this.cached = { value, at: this.now() }
    return value
  }

  async setRequirement(value: TwoStepRequirement): Promise<void> {
    await this.settings.setSetting(SETTING, value)
    this.cached = { value, at: this.now() }
    this.pendingOf.clear()
  }

  /** Whether the account `userId` (of `role`), signed in with its password, must set two-step sign-in up before anything else. */
  async pending(userId: string, role: Role): Promise<boolean> {
    const required = await this.requirement()
    if (required === 'off' || role === 'guest' || (required === 'admins' && role !== 'admin')) return false
    const kept = this.pendingOf.get(userId)
    if (kept !== undefined) return kept
    const pending = await this.account.hasPassword(userId) && !await this.account.twoStepOn(userId)
    this.pendingOf.set(userId, pending)
    return pending
  }

  /** The account's two-step state changed (set up, turned off): read it again. */
  forget(userId: string): void {
    this.pendingOf.delete(userId)
  }
}
