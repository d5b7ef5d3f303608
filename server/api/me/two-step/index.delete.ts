import { z } from 'zod'

const body = z.object({ password: z.string().min(1).max(256), code: z.string().trim().min(1).max(64) }).strict()

/** Turns two-step sign-in off, with the account's password and a code (from the app, or a recovery code). */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  const { password, code } = await readJsonBody(event, body)
  const accounts = useAccounts()
  await accounts.twoStep.disable(user.id, password, code)
  accounts.twoStepPolicy.forget(user.id)
  return { enabled: false }
})
