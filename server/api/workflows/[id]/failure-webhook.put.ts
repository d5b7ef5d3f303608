import { z } from 'zod'

const bodySchema = z.object({ url: z.string().trim().min(1, 'give the URL to call').max(2_000, 'a webhook URL is at most 2,000 characters') }).strict()

/**
 * Sets the URL called when a run of the workflow fails (replacing any before): the failure as JSON,
 * signed the Standard Webhooks way with the secret answered here, shown only this once. The URL
 * is kept sealed and shown again by its host only. 400 for a URL that cannot be one.
 */
export default defineEventHandler(async (event) => {
  const workflow = await requireOwned(event, 'workflow', getRouterParam(event, 'id'))
  const { url } = await readJsonBody(event, bodySchema)
  return useWorkflows().failureWebhooks.set(workflow.id, workflow.userId, url)
})
