import type { Account, CreatedInvite, SignupPolicy } from '../../shared/types/account'

/** What an admin manages: accounts, who may sign up, invite links. */
export function useAdmin() {
  const accounts = ref<Account[]>([])
  const signup = ref<SignupPolicy>('closed')

  async function refresh(): Promise<void> {
    const [list, settings] = await Promise.all([
      $fetch<Account[]>('/api/admin/users'),
      $fetch<{ signup: SignupPolicy }>('/api/admin/settings'),
    ])
    accounts.value = list
    signup.value = settings.signup
  }

  async function setSignup(policy: SignupPolicy): Promise<void> {
    await $fetch('/api/admin/settings', { method: 'PUT', body: { signup: policy } })
    signup.value = policy
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

  return { accounts, signup, refresh, setSignup, createAccount, updateAccount, deleteAccount, createInvite }
}
