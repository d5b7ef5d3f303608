import { threadPatchSchema } from '../../../shared/schemas/personal'

/**
 * Renames, pins, files into a folder (`folderId`, null: out of any) or sets how a conversation
 * asks the model (`settings`, null: the defaults again). Only a rename moves it in the list.
 */
export default defineEventHandler(async (event) => {
  const thread = await requireOwned(event, 'thread', getRouterParam(event, 'id'))
  const { title, ...patch } = await readJsonBody(event, threadPatchSchema)
  if (patch.folderId && !await usePersonal().settings.hasFolder(thread.userId, patch.folderId)) {
    throw createError({ statusCode: 400, statusMessage: 'No such folder', message: 'folderId: you have no such folder. Create it first (POST /api/folders).' })
  }
  // Knowledge bases the person cannot read are refused here (404, as for an unknown one), not skipped silently at each search.
  for (const baseId of patch.settings?.knowledgeBaseIds ?? []) await usePersonal().knowledge.open(thread.userId, baseId)
  const threads = useThreadStore()
  if (title !== undefined) await threads.renameThread(thread.id, title)
  if (Object.keys(patch).length > 0) await threads.updateThread(thread.id, patch)
  return threads.getThread(thread.id)
})
