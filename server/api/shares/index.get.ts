/** The session user's share links, newest first, each with its full URL. */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  return { shares: await usePersonal().shares.list(user.id, event.context.site.appOrigin) }
})
