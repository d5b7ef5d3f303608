import { ref } from 'vue'
import type { ChatPreset, ChatSettings, MyPreferences, ShareLinkSummary, UserPreferences } from '../../shared/types/personal'

const preferences = ref<MyPreferences>({})
const presets = ref<ChatPreset[]>([])
const shares = ref<ShareLinkSummary[]>([])
/** Whether share links open for people without an account here (the admin's choice), once `loadShares` has asked. */
const sharesOpenToAnyone = ref<boolean | undefined>()
let loading: Promise<void> | undefined

/** The person's own preferences, chat presets and share links (shared by every page that shows them). */
export function useMySettings() {
  /** Reads preferences and presets once per page load (again with `force`). */
  function load(force = false): Promise<void> {
    if (!loading || force) {
      loading = Promise.all([
        $fetch<MyPreferences>('/api/me/preferences'),
        $fetch<{ presets: ChatPreset[] }>('/api/me/presets'),
      ]).then(([mine, saved]) => {
        preferences.value = mine
        presets.value = saved.presets
      }).catch((error) => {
        loading = undefined
        throw error
      })
    }
    return loading
  }
  /** Replaces the preferences (a field left out is cleared). */
  async function savePreferences(next: UserPreferences): Promise<void> {
    const { teamDefaultModel } = preferences.value
    preferences.value = { ...await $fetch<UserPreferences>('/api/me/preferences', { method: 'PUT', body: next }), ...(teamDefaultModel ? { teamDefaultModel } : {}) }
  }
  /** Saves a new preset, or replaces `id`. */
  async function savePreset(input: { name: string, settings: ChatSettings }, id?: string): Promise<ChatPreset> {
    const preset = id
      ? await $fetch<ChatPreset>(`/api/me/presets/${encodeURIComponent(id)}`, { method: 'PUT', body: input })
      : await $fetch<ChatPreset>('/api/me/presets', { method: 'POST', body: input })
    presets.value = id ? presets.value.map(item => item.id === id ? preset : item) : [...presets.value, preset]
    return preset
  }
  async function deletePreset(id: string): Promise<void> {
    await $fetch(`/api/me/presets/${encodeURIComponent(id)}`, { method: 'DELETE' })
    presets.value = presets.value.filter(item => item.id !== id)
  }
  /** Changes the password (the current one is asked); other sessions and API tokens end. */
  async function changePassword(currentPassword: string, newPassword: string): Promise<void> {
    await $fetch('/api/me/password', { method: 'PUT', body: { currentPassword, newPassword } })
  }
  /** Deletes the person's own account and everything it owns (their password confirms it). */
  async function deleteAccount(password: string): Promise<void> {
    await $fetch('/api/me', { method: 'DELETE', body: { password } })
  }
  async function loadShares(): Promise<void> {
    const mine = await $fetch<{ shares: ShareLinkSummary[], openToAnyone: boolean }>('/api/shares')
    shares.value = mine.shares
    sharesOpenToAnyone.value = mine.openToAnyone
  }
  /** Shares a conversation's branch on view as it is now. */
  async function share(threadId: string, includeAttachments: boolean): Promise<ShareLinkSummary> {
    const created = await $fetch<ShareLinkSummary>(`/api/threads/${encodeURIComponent(threadId)}/share`, { method: 'POST', body: { includeAttachments } })
    shares.value = [created, ...shares.value]
    return created
  }
  async function revokeShare(id: string): Promise<void> {
    await $fetch(`/api/shares/${encodeURIComponent(id)}`, { method: 'DELETE' })
    shares.value = shares.value.filter(item => item.id !== id)
  }
  return { preferences, presets, shares, sharesOpenToAnyone, load, savePreferences, savePreset, deletePreset, changePassword, deleteAccount, loadShares, share, revokeShare }
}
