/** Lists the enabled tools: what a model may be offered and what the UI can describe. */
export default defineEventHandler(async (event) => {
  await requireSessionUser(event)
  return { tools: await listToolSummaries() }
})
