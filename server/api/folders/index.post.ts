import { folderSchema } from '../../../shared/schemas/personal'

/** Creates a folder for conversations; 409 past the per-person limit. */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  const body = await readJsonBody(event, folderSchema)
  setResponseStatus(event, 201)
  return usePersonal().settings.createFolder(user.id, body.name)
})
