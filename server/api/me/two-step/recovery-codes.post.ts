import { z } from 'zod'

const body = z.union([
  z.object({ code: z.string().trim().min(1).max(64) }).strict(),
  z.object({ password: z.string().min(1).max(256) }).strict(),
])

/**
 * New recovery codes for the session user (the old ones stop working), after a code from the app,
 * a recovery code, or their password (with passkeys only, there is no code to give).
 */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  const proof = await readJsonBody(event, body)
  return useAccounts().twoStep.renewRecoveryCodes(user.id, proof)
})
