import { z } from 'zod'

const bodySchema = z.object({ claimant: z.string().trim().min(8, 'send the tab\'s id as "claimant" (8-100 characters)').max(100) })

/**
 * A tab takes a browser tool call so that no other tab runs it: `{ claimed: true }` for this tab,
 * `{ claimed: false }` while another tab holds it; 409 once answered, 410 once expired.
 */
export default defineEventHandler(async (event) => {
  const job = await requireOwned(event, 'job', getRouterParam(event, 'id'))
  const { claimant } = await readJsonBody(event, bodySchema, { maxBytes: 4 * 1024 })
  return useBackgroundJobs().inputs.claim(job.userId, job.id, getRouterParam(event, 'requestId') ?? '', claimant)
})
