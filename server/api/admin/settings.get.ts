import type { AdminSettings } from '../../../shared/types/account'

/**
 * The admin's settings, in the shape `PUT` takes: who may sign up, whether share links open
 * without an account, and who must use two-step sign-in. (Whether guests are on is the server's
 * configuration, read at /api/auth/me.)
 */
export default defineEventHandler(async (event) => {
  await requireSessionUser(event, { role: 'admin' })
  const [signup, publicShareLinks, twoStepRequired] = await Promise.all([useAccounts().signups.policy(), usePersonal().shares.openToAnyone(), useAccounts().twoStepPolicy.requirement()])
  return { signup, publicShareLinks, twoStepRequired } satisfies AdminSettings
})
