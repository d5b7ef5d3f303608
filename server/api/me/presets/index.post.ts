import { presetSchema } from '../../../../shared/schemas/personal'

/** Saves a chat preset (a name and chat settings); 409 past the per-person limit. */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  const body = await readJsonBody(event, presetSchema)
  setResponseStatus(event, 201)
  return usePersonal().settings.savePreset(user.id, body)
})
