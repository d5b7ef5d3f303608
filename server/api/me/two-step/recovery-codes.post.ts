import { z } from 'zod'

const body = z.object({ code: z.string().trim().min(1).max(64) }).strict()

/** New recovery codes for the session user (the old ones stop working), after a code from the app or a recovery code. */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  const { code } = await readJsonBody(event, body)
  return useAccounts().twoStep.renewRecoveryCodes(user.id, code)
})
