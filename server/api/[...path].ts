/** Any /api path without a route: a JSON 404, never the app's HTML page. */
export default defineEventHandler((event) => {
  throw createError({ statusCode: 404, statusMessage: `No API route ${event.method} ${event.path.split('?')[0]}. See the README for the routes.` })
})
