/**
 * "Export my data": the session user's account, settings, conversations (JSON and Markdown, with
 * their files), workflows with their versions, and workflow runs, as one zip, streamed.
 */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  const day = new Date().toISOString().slice(0, 10)
  setResponseHeaders(event, {
    'content-type': 'application/zip',
    'content-disposition': `attachment; filename="or3-my-data-${day}.zip"`,
    'cache-control': 'private, no-store',
  })
  return sendStream(event, usePersonal().archive(user.id))
})
