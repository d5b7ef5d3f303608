import { accountDeletionSchema } from '../../../shared/schemas/personal'

/**
 * Deletes the session user's account with everything it owns (conversations and their files,
 * workflows and their runs, settings, share links, tokens), given its password (403 when wrong,
 * 429 when tried too often, 409 for the last admin). This browser's session ends.
 */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  if (user.role === 'guest') throw createError({ statusCode: 403, statusMessage: 'Not allowed', message: 'A guest session has no account to delete; its conversations go when it expires, or delete them one by one.' })
  const { password } = await readJsonBody(event, accountDeletionSchema)
  await useAccounts().deleteOwnAccount(user.id, password)
  await setSessionAccount(event, null)
  return { deleted: true }
})
