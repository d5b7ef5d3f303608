/** Removes the person's own values for a credential service (server-wide ones stay). */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  return { services: await useToolSources().credentials.remove(user.id, getRouterParam(event, 'service') ?? '') }
})
