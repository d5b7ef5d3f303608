import { z } from 'zod'

const bodySchema = z.object({
  /**
   * Calls must be signed with this secret: Standard Webhooks (`scheme: 'standard-webhooks'`, the
   * default without a header), or an HMAC-SHA256 of the body in hex in `header` (`'hmac-sha256'`).
   */
  signing: z.object({
    scheme: z.enum(['standard-webhooks', 'hmac-sha256'], { error: 'scheme is "standard-webhooks" or "hmac-sha256"' }).optional(),
    header: z.string().regex(/^[A-Za-z][A-Za-z0-9-]{0,63}$/, 'must be a header name such as X-Signature-256').optional(),
    secret: z.string().min(16, 'the signing secret must be at least 16 characters').max(256),
  }).strict().refine(signing => signing.scheme !== 'hmac-sha256' || signing.header !== undefined, { message: 'name the header the body\'s HMAC comes in (header), such as X-Hub-Signature-256', path: ['header'] }).optional(),
}).strict()

/**
 * Makes the workflow's webhook, or rotates it (the old URL stops working): 201 with its secret
 * path, shown only this once. With `signing`, calls must be signed (and a delivery runs once).
 */
export default defineEventHandler(async (event) => {
  const workflow = await requireOwned(event, 'workflow', getRouterParam(event, 'id'))
  const body = await readJsonBody(event, bodySchema, { allowEmpty: true })
  setResponseStatus(event, 201)
  return useWorkflows().webhooks.create(workflow.id, workflow.userId, body.signing)
})
