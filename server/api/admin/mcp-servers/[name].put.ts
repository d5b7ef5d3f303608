import { z } from 'zod'

/**
 * Adds the MCP server `name`, or replaces its settings: `{ "url": "…", "headers": {…} }` or, where
 * the operator allows it, `{ "command": "…", "args": […], "env": {…} }`, with `enabled`,
 * `timeoutMs`, `maxTotalTimeoutMs` and `tools` as in the config file. A masked value sent back
 * keeps the saved one. It (re)connects at once. Admins only.
 */
export default defineEventHandler(async (event) => {
  await requireSessionUser(event, { role: 'admin' })
  const body = await readJsonBody(event, z.record(z.string(), z.unknown()))
  return useToolSources().mcpCatalog.put(getRouterParam(event, 'name') ?? '', body)
})
