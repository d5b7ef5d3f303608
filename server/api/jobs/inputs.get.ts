/** What the session user's running jobs wait on them for now (browser tools, approvals, questions), newest first. */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  return { requests: await useBackgroundJobs().inputs.openFor(user.id) }
})
