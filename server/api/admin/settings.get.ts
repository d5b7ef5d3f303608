import type { AdminSettings } from '../../../shared/types/account'

/**
 * The admin's settings, in the shape `PUT` takes: who may sign up and whether share links open
 * without an account. (Whether guests are on is the server's configuration, read at /api/auth/me.)
 */
export default defineEventHandler(async (event) => {
  await requireSessionUser(event, { role: 'admin' })
  const [signup, publicShareLinks] = await Promise.all([useAccounts().signups.policy(), usePersonal().shares.openToAnyone()])
  return { signup, publicShareLinks } satisfies AdminSettings
})
