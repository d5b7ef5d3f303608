/** The session user's preferences: display name, default model, theme, custom instructions. */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  return usePersonal().settings.preferences(user.id)
})
