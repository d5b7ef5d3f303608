import type { ApiTokenSummary, CreatedApiToken } from '../../shared/types/account'

/** The signed-in account's personal API tokens: list, create (the secret is returned once), revoke. */
export function useApiTokens() {
  const tokens = ref<ApiTokenSummary[]>([])

  async function refresh(): Promise<void> {
    tokens.value = await $fetch<ApiTokenSummary[]>('/api/auth/tokens')
  }

  /** Creates a token named `name`; the account's password is asked again. */
  async function create(name: string, password: string): Promise<CreatedApiToken> {
    const created = await $fetch<CreatedApiToken>('/api/auth/tokens', { method: 'POST', body: { name, password } })
    await refresh()
    return created
  }

  async function revoke(id: string): Promise<void> {
    await $fetch(`/api/auth/tokens/${encodeURIComponent(id)}`, { method: 'DELETE' })
    await refresh()
  }

  return { tokens, refresh, create, revoke }
}
