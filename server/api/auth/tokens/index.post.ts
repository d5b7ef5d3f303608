import { z } from 'zod'
import { ACCOUNT_LIMITS } from '../../../../shared/types/account'

const bodySchema = z.object({
  name: z.string().trim().min(1, 'is required').max(ACCOUNT_LIMITS.tokenNameMax),
  password: z.string().min(1, 'is required: a token is created only with your password').max(ACCOUNT_LIMITS.passwordMax),
}).strict()

/** Creates a personal API token for `Authorization: Bearer`, with the account's password; its secret is in this answer only. Guests cannot hold tokens. */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  if (user.role === 'guest') throw createError({ statusCode: 403, statusMessage: 'Not allowed', message: 'Guests cannot create API tokens. Create an account first.' })
  const body = await readJsonBody(event, bodySchema)
  setResponseStatus(event, 201)
  return useAccounts().tokens.create(user.id, body.name, body.password)
})
