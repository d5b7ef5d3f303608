/** The bodies of the knowledge-base routes. */
import { z } from 'zod'
import { KNOWLEDGE_DESCRIPTION_MAX, KNOWLEDGE_NAME_MAX } from '../types/knowledge'

/** `POST /api/knowledge`, `PATCH /api/knowledge/:base`. */
export const knowledgeBaseSchema = z.object({
  name: z.string().trim().min(1, 'is required').max(KNOWLEDGE_NAME_MAX, `must be at most ${KNOWLEDGE_NAME_MAX} characters`),
  description: z.string().trim().max(KNOWLEDGE_DESCRIPTION_MAX, `must be at most ${KNOWLEDGE_DESCRIPTION_MAX} characters`).optional(),
  sharedWith: z.array(z.object({
    group: z.string().trim().min(1).max(64),
    access: z.enum(['read', 'edit']),
  }).strict()).max(20, 'must name at most 20 groups').optional(),
}).strict()

/** Characters of base64 for `bytes` bytes. */
const base64Chars = (bytes: number) => Math.ceil(bytes / 3) * 4

/** `POST /api/knowledge/:base/documents`: one file, its bytes in base64 (bounded by the body's size: `knowledgeUploadBodyBytes`). */
export const knowledgeUploadSchema = z.object({
  name: z.string().trim().min(1, 'is required').max(500, 'must be at most 500 characters'),
  type: z.string().trim().max(200).optional(),
  data: z.string().min(1, 'is required: the file\'s bytes in base64'),
}).strict()

/** The largest body of an upload of a file of at most `fileBytes` (a little over, so a file just too large is told its size). */
export function knowledgeUploadBodyBytes(fileBytes: number): number {
  return base64Chars(fileBytes) + 4_096
}
