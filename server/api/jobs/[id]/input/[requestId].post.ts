import { z } from 'zod'

/**
 * Answers what a job asks its user: `{ result }` or `{ error }` for a browser tool, `{ approved,
 * reason? }` for an approval, `{ action, content? }` for a question. 400 when the answer does not
 * fit what was asked, 404 for another user's job, 409 when already answered or when another
 * tab holds the browser tool call (send this tab's `claimant`), 410 when expired or the job has ended.
 */
export default defineEventHandler(async (event) => {
  const job = await requireOwned(event, 'job', getRouterParam(event, 'id'))
  const body = await readJsonBody(event, z.record(z.string(), z.unknown()), { maxBytes: 128 * 1024 })
  const request = await useBackgroundJobs().inputs.answer(job, getRouterParam(event, 'requestId') ?? '', body)
  return { request }
})
