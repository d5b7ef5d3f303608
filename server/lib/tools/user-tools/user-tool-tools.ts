/**
 * `propose_tool` and `run_my_tool`: an agent writes a tool for its person (name, description,
 * JSON Schema, JavaScript), the person sees its code and approves it (a wait, as approvals are; or
 * later in Settings → Your tools), and from then on agents run it by name in the QuickJS sandbox:
 * never in the server's process, `fetch` only through web_fetch's guard (and only for a tool that
 * declared network access, for a person the policy lets reach the internet), credentials only
 * those it declared. A changed tool needs approval again.
 *
 * `propose_tool` saves, then asks: a crash after the save leaves the tool saved and not approved
 * (safe to propose again: the same version). `run_my_tool` runs code that may have effects
 * outside (its fetches), so it is not re-run after a crash interrupted it.
 */
import { z } from 'zod'
import type { UserTool } from '../../../../shared/types/user-tool'
import { defineServerTool, type ServerToolModule } from '../define-tool'
import type { ToolExecutionContext, ToolQuestion } from '../tool-types'
import { compileArgumentsValidator, formatValidationErrors, releaseArgumentsValidator } from '../tool-schema'
import type { JsonSchemaObject } from '../../openrouter/types'
import { runInSandbox, type SandboxFetchAnswer } from '../code/quickjs-sandbox'
import { MAX_USER_TOOL_CODE, type UserTools } from './user-tools'

export interface UserToolRunSettings {
  timeoutMs: number
  memoryMb: number
}

export interface UserToolParts {
  tools: UserTools
  settings: UserToolRunSettings
  /** Why `userId` may not reach the internet (the policy's `capability:internet_access`), or undefined. */
  internetDenial: (userId: string) => Promise<string | undefined>
  /** A fetch through web_fetch's guard, counted in the person's web requests. */
  fetch: (url: string, userId: string, signal?: AbortSignal) => Promise<SandboxFetchAnswer>
}

/** How long the person has to look at a tool's code before the question closes. */
const APPROVAL_WAIT_MS = 15 * 60_000
const OUTPUT_CHARS = 20_000

/**
 * The question that asks to approve `tool`: the server's own sentences (its name, what it may
 * reach), its code and arguments' schema each in a code view of their own, and its description as
 * the model's words (one line, cut). Nothing the model wrote goes into the message, so it cannot
 * fake a code block or push the real code out of view.
 */
export function approvalQuestion(tool: UserTool, changed: boolean): ToolQuestion {
  return {
    message: [
      `The assistant ${changed ? 'changed' : 'wrote'} a tool for you: ${tool.name}.`,
      'It runs in a sandbox with no access to this server; ' + [
        tool.network ? 'it may fetch public web pages' : 'it has no network access',
        tool.services.length > 0 ? `it may read your credentials ${tool.services.join(', ')}` : 'it reads none of your credentials',
      ].join(', and ') + '.',
      'Read its code below: approve it only if that is what you want your assistants to run.',
    ].join(' '),
    code: [
      { label: `The code you approve (exactly what runs, ${tool.code.split('\n').length} lines)`, language: 'javascript', text: tool.code },
      { label: 'Its arguments (JSON Schema)', language: 'json', text: JSON.stringify(tool.parameters, null, 2) },
    ],
    modelWords: tool.description,
    schema: { type: 'object', properties: {} },
    origin: `tool:${tool.name}`,
    timeoutMs: APPROVAL_WAIT_MS,
  }
}

/** Asks the person to approve the current version; true when they did (and it is recorded). */
async function askApproval(parts: UserToolParts, tool: UserTool, context: ToolExecutionContext, changed: boolean): Promise<boolean> {
  if (!context.askUser) return false
  const answer = await context.askUser(approvalQuestion(tool, changed))
  if (answer.action !== 'accept') return false
  await parts.tools.approve(context.userId, tool.name, tool.version)
  return true
}

export function userToolTools(parts: UserToolParts): ServerToolModule[] {
  return [
    defineServerTool({
      name: 'propose_tool',
      description: 'Write a new tool for this person (or change one of theirs): JavaScript run in a sandbox, where `args` holds the arguments and the last expression\'s value is the result. They see the code and approve it; then call it with run_my_tool. `fetch(url)` (synchronous, returns { status, contentType, text }) exists only with network: true; `credentials.get(service, key)` only for the credentials listed in services.',
      parameters: z.object({
        name: z.string().max(41).describe('snake_case name, e.g. word_count'),
        description: z.string().max(1_000).describe('What it does, for models and for the person.'),
        parameters: z.record(z.string(), z.unknown()).optional().describe('JSON Schema (type "object") of its arguments.'),
        code: z.string().max(MAX_USER_TOOL_CODE).describe('Its JavaScript.'),
        services: z.array(z.string().max(81)).max(5).optional().describe('Credentials it reads, as service/key (github/token).'),
        network: z.boolean().optional().describe('Whether it calls fetch.'),
      }),
      runtime: 'server',
      capabilities: ['code_execution'],
      timeoutMs: APPROVAL_WAIT_MS + 60_000,
      handler: async (input, context) => {
        const before = await parts.tools.get(context.userId, input.name)
        const tool = await parts.tools.propose(context.userId, input)
        if (tool.approvedVersion === tool.version) return { name: tool.name, approved: true, note: `Unchanged and approved: call it with run_my_tool({ name: "${tool.name}", args }).` }
        const release = context.holdRoundDeadline?.()
        try {
          if (await askApproval(parts, tool, context, before !== null)) return { name: tool.name, approved: true, note: `Approved: call it with run_my_tool({ name: "${tool.name}", args }).` }
        } finally {
          release?.()
        }
        return { name: tool.name, approved: false, note: 'Saved, but not approved: it cannot run until the person approves it (they can in Settings → Your tools).' }
      },
    }),
    defineServerTool({
      name: 'run_my_tool',
      description: 'Run one of this person\'s own tools (written with propose_tool and approved by them) by name, with its arguments.',
      parameters: z.object({
        name: z.string().max(41).describe('The tool\'s name.'),
        args: z.record(z.string(), z.unknown()).optional().describe('Its arguments, as its schema describes.'),
      }),
      runtime: 'server',
      capabilities: ['code_execution'],
      timeoutMs: APPROVAL_WAIT_MS + 60_000,
      handler: async ({ name, args = {} }, context) => {
        let tool = await parts.tools.get(context.userId, name)
        if (!tool) {
          const names = (await parts.tools.list(context.userId)).map(kept => kept.name)
          throw new Error(`This person has no tool named "${name}"${names.length > 0 ? `; theirs are ${names.join(', ')}` : '; write one with propose_tool'}.`)
        }
        if (tool.approvedVersion !== tool.version) {
          const release = context.holdRoundDeadline?.()
          try {
            if (!await askApproval(parts, tool, context, tool.approvedVersion !== undefined)) throw new Error(`${name} is not approved${tool.approvedVersion ? ' since it changed' : ''}: it runs only once the person approves it (in Settings → Your tools).`)
          } finally {
            release?.()
          }
          tool = (await parts.tools.get(context.userId, name))!
        }
        const schema = structuredClone(tool.parameters) as JsonSchemaObject
        const validate = compileArgumentsValidator(`user tool ${name}`, schema)
        const valid = validate(args)
        const problems = valid ? undefined : formatValidationErrors(validate.errors)
        releaseArgumentsValidator(schema)
        if (problems) throw new Error(`Invalid arguments for ${name}: ${problems}.`)
        if (tool.network) {
          const denial = await parts.internetDenial(context.userId)
          if (denial) throw new Error(`${name} fetches from the web, which ${denial}.`)
        }
        const credentials: Record<string, Record<string, string>> = {}
        for (const need of tool.services) {
          const [service, key] = need.split('/') as [string, string]
          const value = context.credentials.get(service, key)
          if (value !== undefined) (credentials[service] ??= {})[key] = value
        }
        const outcome = await runInSandbox({
          code: tool.code,
          files: {},
          globals: { args },
          credentials,
          ...(tool.network ? { fetch: (url: string) => parts.fetch(url, context.userId, context.signal) } : {}),
          timeoutMs: parts.settings.timeoutMs,
          memoryBytes: parts.settings.memoryMb * 1024 * 1024,
          outputChars: OUTPUT_CHARS,
        }, context.signal)
        if (!outcome.ok) throw new Error(`${name} failed: ${outcome.error}${outcome.stderr ? `\n${outcome.stderr}` : ''}`)
        return { ...(outcome.result !== undefined ? { result: outcome.result } : {}), ...(outcome.stdout ? { stdout: outcome.stdout } : {}) }
      },
    }),
  ]
}
