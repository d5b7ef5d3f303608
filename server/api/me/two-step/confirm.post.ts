import { z } from 'zod'

const body = z.object({ code: z.string().trim().min(1).max(64) }).strict()

/** Turns two-step sign-in on with a code from the app just set up; answers the recovery codes, shown this once. */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  const { code } = await readJsonBody(event, body)
  return useAccounts().twoStep.confirm(user.id, code)
})
