import { preferencesSchema } from '../../../shared/schemas/personal'

/** Replaces the session user's preferences (a field left out is cleared); custom instructions become the system message of every chat without its own. */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  const body = await readJsonBody(event, preferencesSchema)
  return usePersonal().settings.setPreferences(user.id, body)
})
