/** Removes a credential an admin set for everyone. Admins only. */
export default defineEventHandler(async (event) => {
  await requireSessionUser(event, { role: 'admin' })
  return { services: await useToolSources().credentials.removeForEveryone(getRouterParam(event, 'service') ?? '') }
})
