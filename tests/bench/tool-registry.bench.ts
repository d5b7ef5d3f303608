import { bench, describe } from 'vitest'
import { z } from 'zod'
import { builtinServerTools } from '../../server/lib/tools/builtin'
import { clearServerTools, getEnabledDefinitions, registerServerTool } from '../../server/lib/tools/registry'
import { executeServerTool } from '../../server/lib/tools/execute-tool'

// What one tool call costs the job beyond the handler itself: argument parsing, ajv validation
// (compiled once at registration), the deadline timer, and result serialisation.
clearServerTools()
for (const tool of builtinServerTools) registerServerTool(tool.definition, tool.handler, tool.options)
registerServerTool({
  type: 'function',
  function: {
    name: 'noop',
    parameters: { type: 'object', properties: { a: { type: 'string' }, b: { type: 'integer' }, c: { type: 'array', items: { type: 'number' } } }, required: ['a'] },
  },
}, () => 'ok')
registerServerTool({
  type: 'function',
  function: { name: 'noop_zod', parameters: z.object({ a: z.string(), b: z.number().int().optional(), c: z.array(z.number()).optional() }) },
}, () => 'ok')

const args = JSON.stringify({ a: 'hello', b: 3, c: [1, 2, 3, 4, 5] })

describe('executeServerTool overhead', () => {
  bench('JSON-Schema tool, valid arguments', async () => {
    await executeServerTool('noop', args)
  })
  bench('zod tool (ajv + zod refinements), valid arguments', async () => {
    await executeServerTool('noop_zod', args)
  })
  bench('invalid arguments (validation error path)', async () => {
    await executeServerTool('noop', '{"b":"x"}')
  })
  bench('calculate "sqrt(2) * (3 + 4)^2"', async () => {
    await executeServerTool('calculate', '{"expression":"sqrt(2) * (3 + 4)^2"}')
  })
})

describe('tool definitions for a request', () => {
  bench('getEnabledDefinitions()', () => {
    getEnabledDefinitions()
  })
})
