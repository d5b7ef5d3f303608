/** One job in full; live progress comes from `/api/jobs/:id/stream`. */
export default defineEventHandler(async (event) => {
  const job = await requireOwnedJob(event, getRouterParam(event, 'id'))
  return viewJob(job)
})
