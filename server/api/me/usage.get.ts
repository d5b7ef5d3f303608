import type { MyUsageHistory } from '~~/shared/types/limits'

/** The session user's usage by UTC day and model (`?from=&to=`, default the last 30 days; at most 92), newest first. */
export default defineEventHandler(async (event): Promise<MyUsageHistory> => {
  const user = await requireSessionUser(event)
  return useAccounts().usage.history(user.id, getQuery(event))
})
