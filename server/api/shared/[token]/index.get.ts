/**
 * A shared conversation's snapshot, for anyone with the link when the admin allows it, else for
 * the server's signed-in accounts (401). 404 for a link never made, revoked, or whose
 * conversation was deleted. Never indexed.
 */
export default defineEventHandler(async (event) => {
  const viewer = await requireSessionUser(event, { optional: true, newGuest: false })
  setResponseHeader(event, 'X-Robots-Tag', 'noindex, nofollow')
  setResponseHeader(event, 'Cache-Control', 'private, no-store')
  return usePersonal().shares.view(getRouterParam(event, 'token') ?? '', viewer)
})
