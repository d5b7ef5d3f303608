import type { TwoStepStatus } from '~~/shared/types/account'

/** Whether the session user's password sign-in asks for a code from an authenticator app, and recovery codes left. */
export default defineEventHandler(async (event): Promise<TwoStepStatus> => {
  const user = await requireSessionUser(event, { twoStepSetup: true })
  return useAccounts().twoStep.status(user.id)
})
