import type { H3Event } from 'h3'
import { z } from 'zod'
import { getRequestURL } from 'h3'
import { throwHttpError } from '../lib/http/domain-errors'
import { startedServerRuntime } from '../lib/runtime/current'
import { appPageHeaders } from '../lib/tools/mcp/apps'
import type { BackgroundJob } from '../../shared/types/job'

/** A page's `tools/call`: a tool of its own server, its arguments, and whether the person confirmed it. */
const appCallSchema = z.object({
  name: z.string().trim().min(1).max(200),
  arguments: z.record(z.string(), z.unknown()).optional(),
  confirmed: z.boolean().optional(),
}).strict()

/** What a person sends a workflow's running agent step from the run view. */
const stepSteerSchema = z.object({ content: z.string().trim().min(1, 'write a message').max(100_000) }).strict()

/**
 * What the session user does with a job of theirs (`job`, already checked as theirs) beyond watching
 * it: the MCP App under its tool call `callId` (`app(callId).page()` serves the tool's `ui://` page
 * in its sandbox, 404 when it has none; `.callTool()` answers a call the page asks for, checked by
 * the person's tool policy and approvals: 403 / 409 / 429 / 502 saying why), and a message to its
 * running agent step `nodeId` (`steerStep`, read at the step's next round boundary; 409 when that
 * step does not run now).
 */
export function jobInteractions(event: H3Event, job: BackgroundJob) {
  const runtime = () => startedServerRuntime()
  return {
    app: (callId: string) => {
      const apps = () => runtime().mcpApps
      const toolName = () => {
        const call = job.activeToolCalls.find(candidate => candidate.id === callId)
        if (!call || !apps().hasPage(call.name)) throw createError({ statusCode: 404, statusMessage: 'No such app', message: 'This answer has no app for that tool call.' })
        return call.name
      }
      return {
        page: async (): Promise<string> => {
          const name = toolName()
          try {
            const page = await apps().page(job.userId, name)
            setResponseHeaders(event, appPageHeaders(page.csp, [getRequestURL(event).origin, event.context.site.appOrigin]))
            return page.html
          } catch (error) {
            throwHttpError(event, error)
          }
        },
        callTool: async () => {
          const name = toolName()
          const input = await readJsonBody(event, appCallSchema, { maxBytes: 64 * 1024 })
          try {
            return await apps().callTool(job.userId, name, input.name, input.arguments ?? {}, input.confirmed === true)
          } catch (error) {
            throwHttpError(event, error)
          }
        },
      }
    },
    steerStep: async (nodeId: string): Promise<{ id: string }> => {
      const { content } = await readJsonBody(event, stepSteerSchema, { maxBytes: 512 * 1024 })
      try {
        return await runtime().workflowSteers.send(job, nodeId.slice(0, 300), content)
      } catch (error) {
        throwHttpError(event, error)
      }
    },
  }
}
