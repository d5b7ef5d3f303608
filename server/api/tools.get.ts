/** Lists the enabled tools: what a model may be offered and what the UI can describe. */
export default defineEventHandler(async () => {
  await whenServerToolsReady()
  const tools = listServerTools()
    .filter(tool => tool.enabled)
    .map(tool => ({
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters,
      runtime: tool.runtime,
    }))
  return { tools }
})
