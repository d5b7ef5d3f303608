import type { AdminSettings } from '../../../shared/types/account'
import { z } from 'zod'
const bodySchema = z.object({
  signup: z.enum(['closed', 'open', 'invite']).optional(),
  /** Share links open for anyone with them (default false: for this server's signed-in accounts only). */
  publicShareLinks: z.boolean().optional(),
}).strict()

/**
 * Sets who may sign up (`closed`: nobody, the admin creates accounts; `invite`: holders of a
 * one-use link; `open`: anyone) and whether share links open without an account. Admins only.
 */
export default defineEventHandler(async (event) => {
  await requireSessionUser(event, { role: 'admin' })
  const body = await readJsonBody(event, bodySchema)
  if (body.signup) await useAccounts().signups.setPolicy(body.signup)
  if (body.publicShareLinks !== undefined) await usePersonal().shares.setOpenToAnyone(body.publicShareLinks)
  const [signup, publicShareLinks] = await Promise.all([useAccounts().signups.policy(), usePersonal().shares.openToAnyone()])
  return { signup, publicShareLinks } satisfies AdminSettings
})
