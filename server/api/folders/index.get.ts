/** The session user's folders, oldest first. */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  return { folders: await usePersonal().settings.folders(user.id) }
})
