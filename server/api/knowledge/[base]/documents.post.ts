import type { KnowledgeDocument } from '../../../../shared/types/knowledge'
import { knowledgeUploadSchema, knowledgeUploadBodyBytes } from '../../../../shared/schemas/knowledge'

/**
 * Adds a file to a knowledge base (edit access): `{ name, type?, data }`, the file's bytes in base64.
 * 202 with the document, queued to be indexed; 200 when the base has the same file already.
 */
export default defineEventHandler(async (event): Promise<KnowledgeDocument> => {
  const user = await requireSessionUser(event)
  const { fileBytes } = useServerConfig(event).knowledge
  const body = await readJsonBody(event, knowledgeUploadSchema, { maxBytes: knowledgeUploadBodyBytes(fileBytes) })
  const { document, changed } = await usePersonal().knowledge.addDocument(user.id, getRouterParam(event, 'base') ?? '', { name: body.name, type: body.type, bytes: Buffer.from(body.data, 'base64') })
  setResponseStatus(event, changed ? 202 : 200)
  return document
})
