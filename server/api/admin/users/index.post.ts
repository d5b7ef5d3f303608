import { z } from 'zod'
import { accountName, accountPassword } from '../../../../shared/schemas/account'

const bodySchema = z.object({ name: accountName, password: accountPassword, role: z.enum(['admin', 'user']).default('user') }).strict()

/** Creates an account, whatever the sign-up policy (admins only); 409 when the name is taken. */
export default defineEventHandler(async (event) => {
  await requireSessionUser(event, { role: 'admin' })
  const body = await readJsonBody(event, bodySchema)
  setResponseStatus(event, 201)
  return useAccounts().createAccount(body.name, body.password, body.role)
})
