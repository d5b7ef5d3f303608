import type { AdminSettings } from '../../../shared/types/account'
import { z } from 'zod'
const bodySchema = z.object({
  signup: z.enum(['closed', 'open', 'invite']).optional(),
  /** Share links open for anyone with them (default false: for this server's signed-in accounts only). */
  publicShareLinks: z.boolean().optional(),
  /** Who must use two-step sign-in with their password. */
  twoStepRequired: z.enum(['off', 'admins', 'everyone']).optional(),
}).strict()

/**
 * Sets who may sign up (`closed`: nobody, the admin creates accounts; `invite`: holders of a
 * one-use link; `open`: anyone), whether share links open without an account, and who must use
 * two-step sign-in (`off`, `admins`, `everyone`). Admins only.
 */
export default defineEventHandler(async (event) => {
  const admin = await requireSessionUser(event, { role: 'admin' })
  const body = await readJsonBody(event, bodySchema)
  const accounts = useAccounts()
  // Required of others only once the admin who requires it uses it: their own sign-in is never the one it surprises.
  if (body.twoStepRequired && body.twoStepRequired !== 'off' && (await accounts.getAccount(admin.id))?.passwordHash && !await accounts.twoStep.isEnabled(admin.id)) {
    throw createError({ statusCode: 409, statusMessage: 'Conflict', message: 'Set up two-step sign-in for yourself first (Settings → Two-step sign-in: an authenticator app or a passkey), then require it of others.' })
  }
  if (body.signup) await useAccounts().signups.setPolicy(body.signup)
  if (body.publicShareLinks !== undefined) await usePersonal().shares.setOpenToAnyone(body.publicShareLinks)
  if (body.twoStepRequired) await useAccounts().twoStepPolicy.setRequirement(body.twoStepRequired)
  const [signup, publicShareLinks, twoStepRequired] = await Promise.all([useAccounts().signups.policy(), usePersonal().shares.openToAnyone(), useAccounts().twoStepPolicy.requirement()])
  return { signup, publicShareLinks, twoStepRequired } satisfies AdminSettings
})
