import { z } from 'zod'

const body = z.object({ code: z.string().trim().min(1).max(64) }).strict()

/** The second step of a password sign-in: a code from the authenticator app, or a recovery code; starts the session. */
export default defineEventHandler(async (event) => {
  const { code } = await readJsonBody(event, body)
  const account = await signInSteps.secondStep.finish(event, userId => useAccounts().twoStep.check(userId, code))
  await setSessionAccount(event, account)
  return { user: { id: account.id, name: account.name, role: account.role } }
})
