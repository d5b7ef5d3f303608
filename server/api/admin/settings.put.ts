import { z } from 'zod'

const bodySchema = z.object({ signup: z.enum(['closed', 'open', 'invite']) }).strict()

/** Sets who may sign up: `closed` (nobody: the admin creates accounts), `invite` (holders of a one-use link) or `open` (anyone). Admins only. */
export default defineEventHandler(async (event) => {
  await requireSessionUser(event, { role: 'admin' })
  const body = await readJsonBody(event, bodySchema)
  await useAccounts().setSignupPolicy(body.signup)
  return { signup: body.signup }
})
