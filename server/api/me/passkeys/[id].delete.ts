import { z } from 'zod'

const body = z.object({ password: z.string().min(1).max(256) }).strict()

/** Removes one of the session user's passkeys, with their password; the last second step gone turns two-step sign-in off. */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  const { password } = await readJsonBody(event, body)
  const accounts = useAccounts()
  await accounts.passkeys.remove(user.id, getRouterParam(event, 'id') ?? '', password)
  accounts.twoStepPolicy.forget(user.id)
  return { removed: true }
})
