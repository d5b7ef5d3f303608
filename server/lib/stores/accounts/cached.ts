/**
 * An account store that remembers account lookups for a moment. Every request of a signed-in
 * session (and every guest request) looks up an account; on Convex that is a network round trip,
 * so lookups are kept for `ttlMs` (2 s on Convex). This instance forgets an account as soon as it
 * changes it; another instance sees a disable, a password reset or "sign out everywhere" within
 * `ttlMs`.
 */
import { LRUCache } from 'lru-cache'
import type { AccountBackend, StoredAccount } from './account-store'

/** Accounts remembered at most. */
const MAX_CACHED = 10_000

/** `store` with `getAccount` answered from a short-lived cache. */
export function withAccountCache(store: AccountBackend, ttlMs: number): AccountBackend {
  const cache = new LRUCache<string, { account: StoredAccount | null }>({ max: MAX_CACHED, ttl: ttlMs })
  const forget = <T>(id: string, result: T): T => {
    cache.delete(id)
    return result
  }
  return {
    ...store,
    async getAccount(id) {
      const hit = cache.get(id)
      if (hit) return hit.account && { ...hit.account }
      const account = await store.getAccount(id)
      cache.set(id, { account })
      return account && { ...account }
    },
    async createAccount(input) {
      const account = await store.createAccount(input)
      if (account) cache.delete(account.id)
      return account
    },
    async updateAccount(id, patch) {
      return forget(id, await store.updateAccount(id, patch))
    },
    async deleteAccount(id) {
      return forget(id, await store.deleteAccount(id))
    },
  }
}
