/**
 * A loop step: its body (a small graph of its own) runs once per iteration, each iteration a run
 * of its own whose state is kept on the loop's node (`iterations`) at every transition, so a
 * restart resumes the iteration that was under way from its own steps and checkpoints and never
 * runs a finished iteration again. `for-each` runs the body for every item of a list, `concurrency`
 * at a time, and collects the results in order; `until` runs it again on its last result until a
 * condition holds (contains / an RE2 pattern / a model's yes) or `maxIterations` ran.
 * One failing iteration fails the loop and stops the others. Never throws.
 */
import type { WorkflowIterationState, WorkflowLoopNode, WorkflowState } from '../../../shared/types/workflow'
import type { NodeOutcome, WorkflowRunResult } from './run-contract'
import { compileRouterPattern } from './router-patterns'
import { followSignal } from '../follow-signal'
import { sumUsage, usageOfSteps } from '../openrouter/usage'
import type { Usage } from '../openrouter/types'

/** Characters of an item kept on its iteration for display. */
const ITEM_PREVIEW_CHARS = 200

/** What one iteration is given: its item (for each) or the last result (until), its number from 1, the result before it. */
export interface LoopIteration {
  index: number
  item: string
  previous: string
}

/** What a loop step needs from the run it is part of. */
export interface LoopStepParams {
  node: WorkflowLoopNode
  /** What flowed into the loop. */
  input: string
  /** For each: the list, rendered (`items`, default what flowed in). */
  list?: string
  /** The iterations kept from before a restart (the loop was under way). */
  resumed?: WorkflowIterationState[]
  /** Runs the body once, from `resume` if given; its state goes to `onState` at every transition. */
  runBody: (iteration: LoopIteration, resume: WorkflowState | undefined, signal: AbortSignal, onState: (state: WorkflowState) => Promise<boolean>) => Promise<WorkflowRunResult>
  /** Asks a model (an until loop's `ask`). */
  askModel: (request: { model: string, prompt: string }, signal: AbortSignal) => Promise<NodeOutcome>
  defaultModel: string
  /** Keeps the iterations on the loop's node; resolves `true` once stored. */
  save: (iterations: WorkflowIterationState[]) => Promise<boolean>
  signal: AbortSignal
  /** Whether the run is stopping to resume later: iterations under way keep their state. */
  stoppingToResume: () => boolean
  /** Longest text the loop's results together may be (the step limit). */
  maxChars: number
}

/**
 * The items of a for-each list: a JSON array (strings as they are, anything else as JSON), also
 * inside a Markdown code fence, else the non-empty lines with list markers ("- ", "1. ") taken off.
 */
export function loopItems(text: string): string[] {
  let trimmed = text.trim()
  if (trimmed.startsWith('```') && trimmed.endsWith('```') && trimmed.length > 6) {
    const firstLineEnd = trimmed.indexOf('\n')
    if (firstLineEnd > 0) trimmed = trimmed.slice(firstLineEnd + 1, -3).trim()
  }
  if (trimmed.startsWith('[')) {
    try {
      const parsed: unknown = JSON.parse(trimmed)
      if (Array.isArray(parsed)) return parsed.map(item => typeof item === 'string' ? item : JSON.stringify(item))
    } catch {
      // Not JSON: read it as lines.
    }
  }
  return trimmed.split('\n').map(line => line.trim().replace(/^(?:[-*•]|\d{1,4}[.)])\s+/, '').trim()).filter(line => line.length > 0)
}

/** Whether a yes-or-no reply says yes (its first word). */
export function saysYes(reply: string): boolean {
  return /[a-z]+/.exec(reply.toLowerCase())?.[0] === 'yes'
}

/** What a finished iteration keeps of its steps: its workflow steps' child runs (kept in the run history when the run ends), nothing else. */
function childRunsKept(state: WorkflowState): WorkflowState | undefined {
  const withChildren = Object.entries(state.nodeStates).filter(([, node]) => node.child)
  if (withChildren.length === 0) return undefined
  const { agentSteps: _checkpoints, ...rest } = state
  return { ...rest, nodeStates: Object.fromEntries(withChildren) }
}

const preview = (item: string) => item.length > ITEM_PREVIEW_CHARS ? `${item.slice(0, ITEM_PREVIEW_CHARS - 1)}…` : item

/** One loop step's run (see the file comment). */
class LoopStep {
  private readonly iterations: WorkflowIterationState[]
  /** Stops the iterations under way when one fails; follows the run's own stop. */
  private readonly controller: AbortController
  private readonly stopFollowing: () => void
  private failure: { index: number, error: string } | undefined

  /** `count`: a for-each's items (an iteration each from the start); an until loop's iterations are added as they begin. */
  constructor(private readonly params: LoopStepParams, count?: number) {
    if (count === undefined) this.iterations = [...params.resumed ?? []]
    else {
      const resumed = params.resumed?.length === count ? params.resumed : undefined
      this.iterations = Array.from({ length: count }, (_, index) => resumed?.[index] ?? { status: 'pending' as const })
    }
    const { controller, dispose } = followSignal(params.signal)
    this.controller = controller
    this.stopFollowing = dispose
  }

  /**
   * Hands the iterations up as they are (not a copy): the run they belong to copies its whole state
   * when it keeps it, so a copy here at every change would only make a long loop quadratic.
   */
  private save(): Promise<boolean> {
    return this.params.save(this.iterations)
  }

  private get usage(): Usage | undefined {
    return sumUsage(this.iterations.map(iteration => iteration.usage))
  }

  /** Runs iteration `index` (resuming it when a restart interrupted it) and records how it ended. */
  private async iterate(index: number, item: string, shownItem: string | undefined): Promise<void> {
    const before = this.iterations[index]!
    const resume = before.status === 'running' ? before.state : undefined
    const startedAt = before.startedAt ?? Date.now()
    this.iterations[index] = { status: 'running', ...(shownItem !== undefined ? { item: shownItem } : {}), startedAt, ...(resume ? { state: resume } : {}) }
    void this.save()
    const iteration = { index: index + 1, item, previous: index > 0 ? this.iterations[index - 1]!.output ?? '' : '' }
    const result = await this.params.runBody(iteration, resume, this.controller.signal, (state) => {
      if (this.iterations[index]!.status === 'running') this.iterations[index] = { ...this.iterations[index]!, state }
      return this.save()
    })
    // Stopping to resume later: the iteration keeps its state, and goes on from it after the restart.
    if (this.params.stoppingToResume()) return
    const usage = usageOfSteps(result.state.nodeStates)
    const ended = { ...(shownItem !== undefined ? { item: shownItem } : {}), startedAt, finishedAt: Date.now(), ...(usage ? { usage } : {}) }
    if (result.status === 'complete') {
      const kept = childRunsKept(result.state)
      this.iterations[index] = { status: 'completed', ...ended, output: result.output, ...(kept ? { state: kept } : {}) }
    } else if (result.status === 'aborted') {
      this.iterations[index] = { status: 'skipped', ...ended, error: this.failure ? `stopped because iteration ${this.failure.index + 1} failed` : 'stopped' }
    } else {
      const error = result.error ?? 'the iteration failed'
      this.iterations[index] = { status: 'error', ...ended, error, state: result.state }
      if (!this.failure) {
        this.failure = { index, error }
        this.controller.abort('iteration-failed')
      }
    }
    await this.save()
  }

  /** For each: every item, `concurrency` at a time, results in order. */
  async forEach(items: string[]): Promise<NodeOutcome> {
    const { node } = this.params
    const left = items.map((_, index) => index).filter(index => this.iterations[index]!.status !== 'completed')
    const worker = async () => {
      for (let index = left.shift(); index !== undefined && !this.controller.signal.aborted; index = left.shift()) await this.iterate(index, items[index]!, preview(items[index]!))
    }
    try {
      await Promise.all(Array.from({ length: Math.min(node.concurrency, left.length) }, worker))
    } finally {
      this.stopFollowing()
    }
    return this.outcome(() => {
      const results = this.iterations.map(iteration => iteration.output ?? '')
      return node.collect === 'json' ? JSON.stringify(results) : results.join('\n\n')
    })
  }

  /** Until: the body again on its last result, until the condition holds or `maxIterations` ran. */
  async until(): Promise<NodeOutcome> {
    const { node, input } = this.params
    try {
      for (let index = 0; index < node.maxIterations; index++) {
        const given = index === 0 ? input : this.iterations[index - 1]!.output ?? ''
        this.iterations[index] ??= { status: 'pending' }
        if (this.iterations[index]!.status !== 'completed') await this.iterate(index, given, undefined)
        if (this.controller.signal.aborted || this.iterations[index]!.status !== 'completed') break
        const done = this.iterations[index]!
        if (done.conditionHeld === undefined) {
          const held = await this.conditionHolds(done.output ?? '')
          if ('error' in held) {
            this.iterations[index] = { ...done, error: held.error, ...(held.usage ? { usage: sumUsage([done.usage, held.usage]) } : {}) }
            return { error: `the loop's condition could not be checked after iteration ${index + 1}: ${held.error}`, usage: this.usage }
          }
          this.iterations[index] = { ...done, conditionHeld: held.held, ...(held.usage ? { usage: sumUsage([done.usage, held.usage]) } : {}) }
          await this.save()
        }
        if (this.iterations[index]!.conditionHeld) return { output: this.iterations[index]!.output ?? '', usage: this.usage }
      }
    } finally {
      this.stopFollowing()
    }
    return this.outcome(() => {
      if (node.onLimit === 'fail') throw new Error(`its condition still did not hold after ${node.maxIterations} iterations (maxIterations)`)
      return this.iterations.at(-1)?.output ?? ''
    })
  }

  /** How the loop ended: a failed iteration, a stop, or what `collect` makes of the results. */
  private outcome(collect: () => string): NodeOutcome {
    const usage = this.usage
    if (this.failure) {
      const item = this.iterations[this.failure.index]!.item
      return { error: `iteration ${this.failure.index + 1}${item ? ` (“${item.slice(0, 60)}”)` : ''}: ${this.failure.error}`, usage }
    }
    if (this.params.signal.aborted) return { error: 'stopped', kind: 'stopped', usage }
    let output: string
    try {
      output = collect()
    } catch (error) {
      return { error: (error as Error).message, usage }
    }
    if (output.length > this.params.maxChars) return { error: `its iterations' results together are ${output.length.toLocaleString('en')} characters, more than the ${this.params.maxChars.toLocaleString('en')} a step may produce (NUXT_LIMITS_WORKFLOW_STEP_CHARS); ask for shorter results or loop over fewer items`, kind: 'too-long', usage }
    return { output, usage }
  }

  /** Whether an until loop's condition holds for a result (a model's `ask` answers yes or no). */
  private async conditionHolds(output: string): Promise<{ held: boolean, usage?: Usage } | { error: string, usage?: Usage }> {
    const until = this.params.node.until ?? {}
    if (until.contains && output.toLowerCase().includes(until.contains.toLowerCase())) return { held: true }
    if (until.matches) {
      const pattern = compileRouterPattern(until.matches)
      if (pattern.ok && pattern.test(output)) return { held: true }
    }
    if (!until.ask) return { held: false }
    const asked = await this.params.askModel({
      model: until.model ?? this.params.defaultModel,
      prompt: `${until.ask}\n\nText:\n${output}\n\nAnswer with exactly one word: yes or no.`,
    }, this.controller.signal)
    if ('error' in asked) return asked
    return { held: saysYes(asked.output), ...(asked.usage ? { usage: asked.usage } : {}) }
  }
}

/** Runs a loop step to its outcome (see the file comment). */
export function runLoopStep(params: LoopStepParams): Promise<NodeOutcome> {
  const { node } = params
  if (node.mode === 'until') return new LoopStep(params).until()
  const items = loopItems(params.list ?? params.input)
  if (items.length > node.maxItems) {
    return Promise.resolve({ error: `the list has ${items.length} items, more than this loop's maxItems (${node.maxItems}); raise maxItems (up to 100) or pass a shorter list`, kind: 'invalid' })
  }
  return new LoopStep(params, items.length).forEach(items)
}
