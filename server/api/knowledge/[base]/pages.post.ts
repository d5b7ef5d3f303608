import { z } from 'zod'
import type { KnowledgeDocument } from '../../../../shared/types/knowledge'

const body = z.object({ url: z.string().trim().min(1, 'is required').max(4_000, 'must be at most 4,000 characters').url('must be an http(s) address such as https://example.org/handbook') }).strict()

/**
 * Adds a web page (or a PDF, text or CSV file on the web) to a knowledge base (edit access),
 * fetched through web_fetch's guard and counted with the person's web requests; 202 queued, 200
 * when the base has the same page already.
 */
export default defineEventHandler(async (event): Promise<KnowledgeDocument> => {
  const user = await requireSessionUser(event)
  const { url } = await readJsonBody(event, body)
  const { document, changed } = await usePersonal().knowledge.addPage(user.id, getRouterParam(event, 'base') ?? '', url)
  setResponseStatus(event, changed ? 202 : 200)
  return document
})
