import { z } from 'zod'

const body = z.object({ name: z.string().trim().min(1, 'is required').max(64) }).strict()

/** Renames one of the session user's passkeys. */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  const { name } = await readJsonBody(event, body)
  return useAccounts().passkeys.rename(user.id, getRouterParam(event, 'id') ?? '', name)
})
