/** The credential values an admin set for everyone (which keys are set, never the values). Admins only. */
export default defineEventHandler(async (event) => {
  await requireSessionUser(event, { role: 'admin' })
  return { services: await useToolSources().credentials.describeForEveryone() }
})
