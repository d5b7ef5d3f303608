import { shareSchema } from '../../../../shared/schemas/personal'

/**
 * Shares the conversation's branch on view as it is now: a read-only snapshot at an unguessable
 * link (later messages are not in it), with its files only when `includeAttachments`.
 */
export default defineEventHandler(async (event) => {
  const thread = await requireOwned(event, 'thread', getRouterParam(event, 'id'))
  const body = await readJsonBody(event, shareSchema, { allowEmpty: true })
  setResponseStatus(event, 201)
  return usePersonal().shares.create(thread, { includeAttachments: body.includeAttachments, origin: event.context.site.appOrigin })
})
