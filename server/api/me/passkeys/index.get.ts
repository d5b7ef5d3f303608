import type { PasskeySummary } from '~~/shared/types/account'

/** The session user's passkeys: names, when added and last used (never their keys). */
export default defineEventHandler(async (event): Promise<PasskeySummary[]> => {
  const user = await requireSessionUser(event, { twoStepSetup: true })
  return useAccounts().passkeys.list(user.id)
})
