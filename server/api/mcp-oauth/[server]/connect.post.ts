/**
 * Starts the person's authorisation with an OAuth-protected MCP server: answers the authorization
 * server's URL, which the page opens; the authorization server sends the browser back to
 * `/api/mcp-oauth/callback`. Accounts only, not guests.
 */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  if (user.role === 'guest') throw createError({ statusCode: 403, statusMessage: 'Sign in to connect', message: 'Guests cannot connect accounts: create an account or sign in first.' })
  // NUXT_SITE_URL, else the origin the browser sees when it names this host (behind a TLS proxy
  // too): the callback must come back there, never to an origin the request merely claims.
  const { appOrigin } = event.context.site
  // A server that cannot be reached or is not OAuth-protected is answered 502/404 by the app's error handler, with the reason.
  const url = await useToolSources().authorizations.begin(user.id, getRouterParam(event, 'server') ?? '', appOrigin)
  return { authorizationUrl: url.href }
})
