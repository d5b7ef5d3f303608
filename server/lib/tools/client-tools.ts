/**
 * Tools the user's browser runs for a job (the seed's `runtime: 'client'`): the app declares them
 * when it starts a job, the model is offered them with the server's tools, and a call waits until a
 * tab of the same user runs it (jobs/waits). Declarations come from a browser, so they are bounded
 * like any input: how many, name, description and schema sizes, no patterns in schemas, and no
 * name a server tool already has.
 */
import { z } from 'zod'
import { getServerTool } from './registry'
import { answerSchemaProblem } from './outside-schemas'
import { TOOL_NAME_PATTERN } from './tool-schema'
import type { ClientToolDeclaration } from '../../../shared/types/tool'
import { DomainError, type HttpAnswer } from '../domain-error'

/** Most browser tools one job may declare. */
export const MAX_CLIENT_TOOLS = 16

const declaration = z.object({
  name: z.string().regex(TOOL_NAME_PATTERN, 'must be 1-64 letters, digits, "_" or "-"'),
  description: z.string().trim().min(1, 'say what the tool does').max(1_000),
  parameters: z.record(z.string(), z.unknown()),
  resultSchema: z.record(z.string(), z.unknown()).optional(),
}).strict().superRefine((tool, context) => {
  if (tool.parameters.type !== 'object') context.addIssue({ code: 'custom', path: ['parameters'], message: 'must be a JSON Schema of type "object"' })
  const problems = [answerSchemaProblem(tool.parameters, 'parameters'), tool.resultSchema ? answerSchemaProblem(tool.resultSchema, 'resultSchema') : undefined]
  for (const problem of problems) if (problem) context.addIssue({ code: 'custom', message: problem })
})

/** The `_clientTools` / `clientTools` field of a chat request. */
export const clientToolsSchema = z.array(declaration).max(MAX_CLIENT_TOOLS, `declare at most ${MAX_CLIENT_TOOLS} browser tools`)
  .superRefine((tools, context) => {
    const seen = new Set<string>()
    tools.forEach((tool, index) => {
      if (seen.has(tool.name)) context.addIssue({ code: 'custom', path: [index, 'name'], message: `"${tool.name}" is declared twice` })
      seen.add(tool.name)
    })
  })

/** Browser tools that cannot be offered: the message says which and what to do (a 400). */
export class ClientToolError extends DomainError {
  override readonly name = 'ClientToolError'

  httpAnswer(): HttpAnswer {
    return { statusCode: 400, statusMessage: 'Invalid browser tool', message: this.message }
  }

  static isInstance(error: unknown): error is ClientToolError {
    return error instanceof Error && error.name === 'ClientToolError'
  }
}

/** Throws a ClientToolError when one of `tools` has the name of a server tool. */
export function assertClientToolsFree(tools: readonly ClientToolDeclaration[] | undefined): void {
  const taken = tools?.find(tool => getServerTool(tool.name) !== undefined)
  if (taken) throw new ClientToolError(`The browser tool "${taken.name}" has the name of a server tool; give it another name.`)
}
