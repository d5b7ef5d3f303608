import { z } from 'zod'
import { defineServerTool } from '../utils/chat/tool-registry'

/**
 * Template for a new tool (skipped by discovery because its name starts with "_").
 * Copy it to server/tools/<your-tool>.ts, rename the tool, describe its parameters, and restart.
 *
 * - The name is what the model calls: letters, digits, "_" or "-".
 * - The description and parameter descriptions are what the model reads to decide when to call it.
 * - Return a string or any JSON value; throw an Error to tell the model what went wrong.
 * - Set `idempotent: true` only when running it twice does no harm: after a crash such a call is
 *   re-run, any other is reported to the model as "outcome unknown".
 * - Pass `context.signal` to fetch() and other I/O so timeouts and aborts stop your work.
 */
export default defineServerTool({
  name: 'my_tool',
  description: 'Describe what the tool does and when the model should use it.',
  parameters: z.object({
    query: z.string().min(1).describe('What the tool should look up.'),
  }),
  runtime: 'server',
  timeoutMs: 10_000,
  handler: async ({ query }, context) => {
    const response = await fetch(`https://example.com/search?q=${encodeURIComponent(query)}`, { signal: context.signal })
    if (!response.ok) throw new Error(`search failed with status ${response.status}`)
    return await response.json()
  },
})
