/**
 * `task`: an agent hands part of its work to a subagent, a child chat job with its own
 * instructions, model and tools, sharing the parent's workspace. The child is a job like any
 * other (durable, resumed after a restart, counted in its person's running jobs and budget, listed
 * with its parent's id); its final answer is the call's result.
 *
 * Exactly once: the child's id follows from the parent's job and the call (shared/subagent.ts),
 * and the tool is marked idempotent, so a parent resumed after a crash runs the call again and
 * finds the child it had started, running (resumed by the same restart) or ended, and never starts
 * a second. A crash before the child was created starts it then; a child deleted by retention
 * before its parent came back (minutes) is started again, which the model is not told apart from
 * the first.
 *
 * Stopping: a parent stopped by its person (or a limit) stops its children; a parent stopped by a
 * shutdown or a lost lease leaves them to their own checkpoint and resume.
 */
import { LRUCache } from 'lru-cache'
import { z } from 'zod'
import type { BackgroundJob } from '../../../shared/types/job'
import { SUBAGENT_TOOL, subagentJobId } from '../../../shared/subagent'
import type { ChatMessage } from '../openrouter/types'
import { defineServerTool, type ServerToolModule } from '../tools/define-tool'
import { sleep } from '../openrouter/fetch-with-retry'
import { workspaceIdFor } from '../tools/workspace/workspaces'
import type { JobStore } from '../stores/jobs/job-store'
import type { Role } from '../../../shared/types/account'
import type { BackgroundJobManager } from './manager'

export interface SubagentSettings {
  maxDepth: number
  perJob: number
}

/** Characters of a subagent's answer handed back to its parent. */
const RESULT_CHARS = 40_000
/** How often a child running on another instance (or about to be resumed) is looked at. */
const POLL_MS = 1_000
/** Longest one subagent may take, start to end (its own inactivity timeout usually ends it sooner). */
const SUBAGENT_TIMEOUT_MS = 60 * 60_000

const INSTRUCTIONS_NOTE = 'You are a subagent: another agent gave you the task below. Work on it with your tools, then reply with the result it needs, complete and self-contained: your last reply is all it sees.'

export interface SubagentParts {
  manager: Pick<BackgroundJobManager, 'startChatJob' | 'abortJob' | 'apiKeyOf'> & { runs: Pick<BackgroundJobManager['runs'], 'has' | 'settled' | 'stopReason'> }
  store: Pick<JobStore, 'getJob'>
  roleOf: (userId: string) => Promise<Role>
}

/**
 * The tools a subagent gets: those its parent asked for, or all the parent may use; never one the
 * parent may not (its job's narrowed set, after the person's policy), and `task` only below the
 * depth limit. Throws naming what the parent may hand on when it asks for more.
 */
export function subagentToolNames(asked: readonly string[] | undefined, parentMayUse: readonly string[], mayNest: boolean): string[] {
  const allowed = parentMayUse.filter(name => name !== SUBAGENT_TOOL || mayNest)
  if (!asked) return allowed
  const beyond = asked.filter(name => !allowed.includes(name))
  if (beyond.length > 0) {
    const names = beyond.map(name => `"${name}"`).join(', ')
    throw new Error(`You may not give a subagent ${names}: it gets only tools you may use yourself${mayNest ? '' : ' (and no task at the depth limit)'}, which are ${allowed.length > 0 ? allowed.join(', ') : 'none'}.`)
  }
  return [...new Set(asked)]
}

export class Subagents {
  /** Children started per parent job in this process (a bound on fan-out; depth bounds the rest); the oldest parents are forgotten. */
  private readonly started = new LRUCache<string, Set<string>>({ max: 10_000 })

  constructor(private readonly parts: SubagentParts, private readonly settings: SubagentSettings) {}

  /** The `task` tool. */
  tool(): ServerToolModule {
    return defineServerTool({
      name: SUBAGENT_TOOL,
      description: 'Start a subagent: another agent that works on a task with its own instructions (and optionally another model or fewer tools) and returns its final answer. It shares this conversation\'s workspace files. Use it for a self-contained piece of work; say everything it needs in the prompt.',
      parameters: z.object({
        description: z.string().trim().min(1).max(120).describe('The task in a few words (shown to the person).'),
        prompt: z.string().trim().min(1).max(20_000).describe('Everything the subagent needs to know and do.'),
        instructions: z.string().max(10_000).optional().describe('Its system instructions (who it is, how to answer).'),
        model: z.string().max(200).optional().describe('Its model; default the same as yours.'),
        tools: z.array(z.string().max(64)).max(50).optional().describe('The tools it may use (names); default the same as yours.'),
      }),
      runtime: 'server',
      idempotent: true,
      capabilities: ['subagents'],
      timeoutMs: SUBAGENT_TIMEOUT_MS,
      handler: async (args, context) => {
        const parent = await this.parts.store.getJob(context.jobId)
        if (!parent?.request || !context.toolCallId) throw new Error('A subagent can only be started by a running job.')
        const depth = (parent.request.subagent?.depth ?? 0) + 1
        if (depth > this.settings.maxDepth) throw new Error(`Subagents may nest ${this.settings.maxDepth} deep, and this one is at the limit: do the task yourself.`)
        const childId = subagentJobId(parent.id, context.toolCallId)
        const release = context.holdRoundDeadline?.()
        try {
          if (!await this.parts.store.getJob(childId)) await this.start(parent, childId, depth, args, context)
          const child = await this.waitForEnd(parent.id, childId, context.signal)
          return this.resultOf(child)
        } finally {
          release?.()
        }
      },
    })
  }

  private async start(parent: BackgroundJob, childId: string, depth: number, args: { description: string, prompt: string, instructions?: string, model?: string, tools?: string[] }, context: { toolCallId?: string, userId: string, threadId: string, jobId: string, workspaceId?: string, availableTools?: readonly string[] }): Promise<void> {
    const started = this.started.get(parent.id) ?? new Set<string>()
    if (!started.has(childId) && started.size >= this.settings.perJob) throw new Error(`This job started ${this.settings.perJob} subagents, the most one may. Do the rest yourself.`)
    const request = parent.request!
    const toolNames = subagentToolNames(args.tools, context.availableTools ?? [], depth < this.settings.maxDepth)
    const messages: ChatMessage[] = [
      { role: 'system', content: `${args.instructions ? `${args.instructions.trim()}\n\n` : ''}${INSTRUCTIONS_NOTE}` },
      { role: 'user', content: args.prompt },
    ]
    try {
      await this.parts.manager.startChatJob({
        principal: { userId: parent.userId, role: await this.parts.roleOf(parent.userId) },
        jobId: childId,
        threadId: parent.threadId,
        request: {
          model: args.model ?? request.model,
          messages,
          fields: typeof request.fields.max_tokens === 'number' ? { max_tokens: request.fields.max_tokens } : {},
          toolNames,
          subagent: { parentJobId: parent.id, toolCallId: context.toolCallId!, depth, description: args.description, workspaceId: workspaceIdFor(context) },
        },
        userApiKey: this.parts.manager.apiKeyOf(parent),
      })
    } catch (error) {
      // Started meanwhile (the same call resumed twice): wait for that one.
      if (await this.parts.store.getJob(childId)) return
      throw new Error(`The subagent could not start: ${(error as Error).message}`)
    }
    started.add(childId)
    this.started.set(parent.id, started)
  }

  /** Waits for the child's end; stops it when its parent is stopped by its person or a limit. */
  private async waitForEnd(parentId: string, childId: string, signal: AbortSignal | undefined): Promise<BackgroundJob> {
    for (;;) {
      if (signal?.aborted) {
        const reason = this.parts.manager.runs.stopReason(parentId)
        // A shutdown or a lost lease: the child checkpoints and resumes on its own, and so does this call.
        if (reason !== 'shutdown' && reason !== 'lease-lost') await this.parts.manager.abortJob(childId)
        throw new Error('Stopped: the subagent was stopped with its parent.')
      }
      if (this.parts.manager.runs.has(childId)) {
        await Promise.race([this.parts.manager.runs.settled(childId), new Promise(resolve => signal?.addEventListener('abort', resolve, { once: true }))])
      }
      const child = await this.parts.store.getJob(childId)
      if (!child) throw new Error('The subagent\'s job is gone (it ended long ago and was deleted).')
      if (child.status !== 'streaming') return child
      // Running on another instance, or about to be resumed here.
      // An abort ends the wait; the loop's first check then handles it.
      await sleep(POLL_MS, signal).catch(() => {})
    }
  }

  private resultOf(child: BackgroundJob): string {
    if (child.status === 'complete') {
      const text = child.content.trim() || '(The subagent answered with no text.)'
      return text.length > RESULT_CHARS ? `${text.slice(0, RESULT_CHARS)}\n\n[… the subagent's answer was cut at ${RESULT_CHARS.toLocaleString('en')} characters]` : text
    }
    if (child.status === 'aborted') throw new Error('The subagent was stopped before it finished.')
    throw new Error(`The subagent failed: ${child.error?.message ?? child.status}`)
  }
}
