/**
 * Who may sign up: the admin's policy (`closed`, `open` or `invite`, closed unless set) and the
 * one-use invite codes they make, kept only as hashes.
 */
import { createHash, randomBytes } from 'node:crypto'
import type { CreatedInvite, SignupPolicy } from '../../../shared/types/account'
import type { AccountStore } from '../stores/accounts/account-store'
import type { SettingsReadWrite } from '../stores/settings/settings-store'

const SIGNUP_SETTING = 'signup-policy'
const SIGNUP_POLICIES: readonly SignupPolicy[] = ['closed', 'open', 'invite']

/** How an invite code is kept and looked up. */
export function hashInviteCode(code: string): string {
  return createHash('sha256').update(code).digest('hex')
}

/** The sign-up policy and invites. */
export class SignupSettings {
  constructor(private readonly stores: { accounts: AccountStore, settings: SettingsReadWrite }, private readonly inviteTtlMs: number) {}

  /** The admin's sign-up policy (`closed` until they set one). */
  async policy(): Promise<SignupPolicy> {
    const stored = await this.stores.settings.getSetting(SIGNUP_SETTING)
    return SIGNUP_POLICIES.includes(stored as SignupPolicy) ? stored as SignupPolicy : 'closed'
  }

  async setPolicy(policy: SignupPolicy): Promise<void> {
    await this.stores.settings.setSetting(SIGNUP_SETTING, policy)
  }

  /** A one-use invite code, valid for the configured time. */
  async createInvite(adminId: string, now = Date.now()): Promise<CreatedInvite> {
    const code = randomBytes(24).toString('base64url')
    const expiresAt = now + this.inviteTtlMs
    await this.stores.accounts.createInvite({ codeHash: hashInviteCode(code), createdBy: adminId, expiresAt, now })
    return { code, expiresAt }
  }
}
