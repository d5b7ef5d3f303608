/** The workflows shipped with the app, to install from the workflows page. */
export default defineEventHandler(async (event) => {
  await requireSessionUser(event)
  return { examples: useWorkflows().examples() }
})
