import { z } from 'zod'

const bodySchema = z.object({ everywhere: z.boolean().optional() }).strict()

/** Ends this browser's session; with `{ everywhere: true }` every session of the account, on every device. */
export default defineEventHandler(async (event) => {
  const body = await readJsonBody(event, bodySchema, { allowEmpty: true })
  const user = await requireSessionUser(event, { optional: true })
  if (body.everywhere && user && user.role !== 'guest') await useAccounts().endAllSessions(user.id)
  await setSessionAccount(event, null)
  return { signedOut: true }
})
