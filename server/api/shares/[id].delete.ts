/** Revokes one of the session user's share links: it opens nothing from now on. */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  if (!await usePersonal().shares.revoke(user.id, getRouterParam(event, 'id') ?? '')) throw createError({ statusCode: 404, statusMessage: 'Not found', message: 'You have no such share link.' })
  return { revoked: true }
})
