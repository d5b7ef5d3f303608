import { folderSchema } from '../../../shared/schemas/personal'

/** Renames one of the session user's folders; 404 when they have no such folder. */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  const body = await readJsonBody(event, folderSchema)
  return usePersonal().settings.renameFolder(user.id, getRouterParam(event, 'id') ?? '', body.name)
})
