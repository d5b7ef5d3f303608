/** Takes back the person's consent: the server's next call with their credentials asks again. */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  return { servers: await useToolSources().withdrawCredentials(user.id, getRouterParam(event, 'server') ?? '') }
})
