import { z } from 'zod'
import { accountPassword } from '../../../../shared/schemas/account'

const bodySchema = z.object({
  role: z.enum(['admin', 'user']).optional(),
  disabled: z.boolean().optional(),
  /** A new password: every session of the account ends. */
  password: accountPassword.optional(),
}).strict()

/** Changes an account's role, disables or enables it, or resets its password (admins only). Disabling or a reset ends its sessions at once. */
export default defineEventHandler(async (event) => {
  await requireSessionUser(event, { role: 'admin' })
  const body = await readJsonBody(event, bodySchema)
  const updated = await useAccounts().updateAccount(getRouterParam(event, 'id') ?? '', body)
  if (!updated) throw createError({ statusCode: 404, statusMessage: 'No such account.' })
  return updated
})
