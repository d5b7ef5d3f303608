import { passwordChangeSchema } from '../../../shared/schemas/personal'

/**
 * Changes the session user's password, given the current one (403 when wrong, 429 when tried too
 * often). Every other session and every API token ends, as after an admin's reset; this browser
 * gets a fresh session.
 */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  if (user.role === 'guest') throw createError({ statusCode: 403, statusMessage: 'Not allowed', message: 'A guest session has no password. Create an account first.' })
  const body = await readJsonBody(event, passwordChangeSchema)
  const account = await useAccounts().changePassword(user.id, body.currentPassword, body.newPassword)
  await setSessionAccount(event, account)
  return { changed: true }
})
