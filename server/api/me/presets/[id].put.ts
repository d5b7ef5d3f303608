import { presetSchema } from '../../../../shared/schemas/personal'

/** Replaces one of the session user's presets; 404 when they have no such preset. */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  const body = await readJsonBody(event, presetSchema)
  return usePersonal().settings.savePreset(user.id, body, getRouterParam(event, 'id') ?? '')
})
