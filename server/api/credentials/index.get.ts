/** The credential services tools ask for (and any the person set), with which keys are set where; values are never sent back. */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  return { services: await useToolSources().credentials.describe(user.id) }
})
