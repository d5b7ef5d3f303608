import { apiRoutes } from '#or3/api-routes'
import { allowedMethods } from '../lib/http/api-methods'

/** A wrong method on an existing API path: 405 with `Allow`, as JSON (not the app's HTML page). */
export default defineEventHandler((event) => {
  if (!event.path.startsWith('/api/')) return
  const allowed = allowedMethods(apiRoutes, event.path)
  if (!allowed || allowed.includes(event.method)) return
  setResponseHeader(event, 'Allow', allowed.join(', '))
  throw createError({ statusCode: 405, statusMessage: 'Method Not Allowed', message: `${event.method} is not allowed on this path; use ${allowed.join(' or ')}.` })
})
