import { roleLimitOverridesBody } from '../../../shared/schemas/limits'

/**
 * Replaces the admin's changes to the per-role limits (`{ user: { dailyTokens: 500000 } }`); a
 * field left out goes back to its configured default. Applies to new starts at once on this
 * instance, within seconds on others. Admins only.
 */
export default defineEventHandler(async (event) => {
  await requireSessionUser(event, { role: 'admin' })
  const body = await readJsonBody(event, roleLimitOverridesBody)
  return useAccounts().limits.setOverrides(body)
})
