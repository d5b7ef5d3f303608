import { ref } from 'vue'
import type { AccountGroupView, Group } from '../../shared/types/groups'
import type { RoleLimits } from '../../shared/types/limits'

/** Groups as an admin manages them: the groups and their limits, and each account's groups with the limits in effect. */
export function useAdminGroups() {
  const groups = ref<Group[]>([])

  async function refresh(): Promise<void> {
    groups.value = (await $fetch<{ groups: Group[] }>('/api/admin/groups')).groups
  }

  /** Creates or changes a group. */
  async function save(name: string, change: { description: string, limits: Partial<RoleLimits>, defaultModel?: string, instructions?: string }): Promise<void> {
    await $fetch(`/api/admin/groups/${encodeURIComponent(name)}`, { method: 'PUT', body: change })
    await refresh()
  }

  async function remove(name: string): Promise<void> {
    await $fetch(`/api/admin/groups/${encodeURIComponent(name)}`, { method: 'DELETE' })
    await refresh()
  }

  /** An account's groups and its limits with where each comes from. */
  function ofAccount(id: string): Promise<AccountGroupView> {
    return $fetch<AccountGroupView>(`/api/admin/users/${encodeURIComponent(id)}/groups`)
  }

  /** Puts an account in `names` (the groups an admin gives it). */
  function setForAccount(id: string, names: string[]): Promise<AccountGroupView> {
    return $fetch<AccountGroupView>(`/api/admin/users/${encodeURIComponent(id)}/groups`, { method: 'PUT', body: { groups: names } })
  }

  return { groups, refresh, save, remove, ofAccount, setForAccount }
}
