import { z } from 'zod'

const bodySchema = z.object({
  /** Bodies must carry an HMAC-SHA256 of themselves, in hex, in this header, made with this secret. */
  signing: z.object({
    header: z.string().regex(/^[A-Za-z][A-Za-z0-9-]{0,63}$/, 'must be a header name such as X-Signature-256'),
    secret: z.string().min(16, 'the signing secret must be at least 16 characters').max(256),
  }).strict().optional(),
}).strict()

/**
 * Makes the workflow's webhook, or rotates it (the old URL stops working): 201 with its secret
 * path, shown only this once. With `signing`, calls must sign their bodies.
 */
export default defineEventHandler(async (event) => {
  const workflow = await requireOwned(event, 'workflow', getRouterParam(event, 'id'))
  const body = await readJsonBody(event, bodySchema, { allowEmpty: true })
  setResponseStatus(event, 201)
  return useWorkflows().webhooks.create(workflow.id, workflow.userId, body.signing)
})
