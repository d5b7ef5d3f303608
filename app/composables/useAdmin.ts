import type { Account, AdminSettings, CreatedInvite, SignupPolicy } from '../../shared/types/account'
import type { RoleLimitOverrides, RoleLimitsView, UserUsageRow } from '../../shared/types/limits'
import type { FeedbackReport } from '../../shared/types/personal'

/** What an admin manages: accounts, who may sign up, share links, invite links, per-role limits, usage and answers' ratings. */
export function useAdmin() {
  const accounts = ref<Account[]>([])
  const signup = ref<SignupPolicy>('closed')
  const publicShareLinks = ref(false)
  const twoStepRequired = ref<AdminSettings['twoStepRequired']>('off')
  const feedback = ref<FeedbackReport | null>(null)
  const limits = ref<RoleLimitsView | null>(null)
  const usage = ref<{ day: string, rows: UserUsageRow[] }>({ day: '', rows: [] })

  async function refresh(): Promise<void> {
    const [list, settings, roleLimits, today, ratings] = await Promise.all([
      $fetch<Account[]>('/api/admin/users'),
      $fetch<AdminSettings>('/api/admin/settings'),
      $fetch<RoleLimitsView>('/api/admin/limits'),
      $fetch<{ day: string, rows: UserUsageRow[] }>('/api/admin/usage'),
      $fetch<FeedbackReport>('/api/admin/feedback'),
    ])
    accounts.value = list
    signup.value = settings.signup
    publicShareLinks.value = settings.publicShareLinks
    twoStepRequired.value = settings.twoStepRequired
    feedback.value = ratings
    limits.value = roleLimits
    usage.value = today
  }

  /** Replaces the admin's changes to the per-role limits (a field left out is its default again). */
  async function setLimits(overrides: RoleLimitOverrides): Promise<void> {
    limits.value = await $fetch<RoleLimitsView>('/api/admin/limits', { method: 'PUT', body: overrides })
  }

  async function setSignup(policy: SignupPolicy): Promise<void> {
    await $fetch('/api/admin/settings', { method: 'PUT', body: { signup: policy } })
    signup.value = policy
  }

  /** Whether share links open for anyone with them (else for this server's accounts only). */
  async function setPublicShareLinks(open: boolean): Promise<void> {
    await $fetch('/api/admin/settings', { method: 'PUT', body: { publicShareLinks: open } })
    publicShareLinks.value = open
  }

  /** Who must use two-step sign-in with their password (refused until the admin uses it: 409). */
  async function setTwoStepRequired(required: AdminSettings['twoStepRequired']): Promise<void> {
    twoStepRequired.value = (await $fetch<AdminSettings>('/api/admin/settings', { method: 'PUT', body: { twoStepRequired: required } })).twoStepRequired
  }

  async function createAccount(input: { name: string, password: string, role: Account['role'] }): Promise<void> {
    await $fetch('/api/admin/users', { method: 'POST', body: input })
    await refresh()
  }

  async function updateAccount(id: string, change: { role?: Account['role'], disabled?: boolean, password?: string }): Promise<void> {
    await $fetch(`/api/admin/users/${encodeURIComponent(id)}`, { method: 'PATCH', body: change })
    await refresh()
  }

  async function deleteAccount(id: string): Promise<void> {
    await $fetch(`/api/admin/users/${encodeURIComponent(id)}`, { method: 'DELETE' })
    await refresh()
  }

  function createInvite(): Promise<CreatedInvite & { url: string }> {
    return $fetch<CreatedInvite & { url: string }>('/api/admin/invites', { method: 'POST' })
  }

  return { accounts, signup, publicShareLinks, twoStepRequired, setTwoStepRequired, feedback, limits, usage, refresh, setSignup, setPublicShareLinks, setLimits, createAccount, updateAccount, deleteAccount, createInvite }
}
