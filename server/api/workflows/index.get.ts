/** The session user's saved workflows, most recently changed first. */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  return { workflows: await useWorkflows().saved.listWorkflows(user.id) }
})
