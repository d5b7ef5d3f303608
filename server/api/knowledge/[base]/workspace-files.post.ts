import { z } from 'zod'
import type { KnowledgeDocument } from '../../../../shared/types/knowledge'

const body = z.object({
  threadId: z.string().trim().min(1, 'is required').max(200),
  path: z.string().min(1, 'is required').max(512, 'must be at most 512 characters'),
}).strict()

/**
 * Adds a file of one of the session user's conversations' workspaces (what the model or they
 * wrote there) to a knowledge base (edit access): 202 queued, 200 when the base has the same file
 * already; 404 when the conversation or the file is not theirs or not there.
 */
export default defineEventHandler(async (event): Promise<KnowledgeDocument> => {
  const user = await requireSessionUser(event)
  const input = await readJsonBody(event, body)
  const thread = await requireOwned(event, 'thread', input.threadId)
  const { document, changed } = await usePersonal().knowledge.addWorkspaceFile(user.id, getRouterParam(event, 'base') ?? '', thread.id, input.path)
  setResponseStatus(event, changed ? 202 : 200)
  return document
})
