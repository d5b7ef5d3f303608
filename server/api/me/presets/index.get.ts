/** The session user's saved chat presets. */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  return { presets: await usePersonal().settings.presets(user.id) }
})
