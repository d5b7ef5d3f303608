/**
 * The one place a job start is admitted. In order: the role's models, the workflow's cost bound,
 * the concurrency caps with their fair shares, the start rate, the daily budget. Each refusal is a
 * domain error the HTTP layer answers (403, 400, 429/503, 429, 402) with words a person can act
 * on. What it returns is what the job runs with: its role's limits and its budget, its first model
 * request already reserved (budget-pool.ts).
 */
import { assertModelsAllowed } from '../../models/model-access'
import { assertWorkflowWithinLimits } from '../../workflows/step-budget'
import { DailyBudgets, outputEstimateOf, type Allowance, type UsageLedger } from './budget'
import { estimateRequestTokens, RunBudget } from './budget-pool'
import { JobSlots, type CapacityLimits } from './caps'
import { JobStartRate } from './start-rate'
import { memoryLimiters, type LimiterFactory } from '../../stores/rate-limits/limiters'
import type { JobPrincipal } from './principal'
import type { Role } from '../../../../shared/types/account'
import type { RoleLimits } from '../../../../shared/types/limits'
import type { ChatMessage } from '../../openrouter/types'
import type { WorkflowDefinition } from '../../../../shared/types/workflow'

/** Where each role's limits come from (the configured defaults with the admin's changes). */
export interface RoleLimitSource {
  /** `role`'s limits; for person `userId`, with what their groups give on top. */
  forRole(role: Role, userId?: string): Promise<RoleLimits>
}

/** What admission needs. */
export interface AdmissionOptions extends CapacityLimits {
  jobStartsPerIpPerMinute: number
  roleLimits: RoleLimitSource
  /** Where usage is counted; without one, budgets are not enforced. */
  usage?: UsageLedger
  /** Where the start-rate counters live (default: this process's memory). */
  limiterFor?: LimiterFactory
  now?: () => number
}

/** What a start asks for. */
export interface AdmissionRequest {
  models: Iterable<string>
  workflow?: WorkflowDefinition
  /** The first model request, for its reservation (without one: the role's output cap). */
  firstRequest?: { messages: readonly ChatMessage[], max_tokens?: unknown }
  /** How many jobs are about to start together, this one first (models compared side by side): the caps must have room for all. */
  together?: number
}

/**
 * A start that passed: the limits and budget the job runs with. Its budget holds a reservation:
 * a start that does not go on must `close` it.
 */
export interface Admission {
  principal: JobPrincipal
  limits: RoleLimits
  budget: RunBudget
}


/** Admits job starts and holds the running jobs' slots. */
export class JobAdmission {
  readonly slots: JobSlots
  readonly budgets: DailyBudgets | undefined
  private readonly rate: JobStartRate

  constructor(private readonly options: AdmissionOptions) {
    this.slots = new JobSlots(options)
    this.rate = new JobStartRate(options.jobStartsPerIpPerMinute, options.limiterFor ?? memoryLimiters)
    this.budgets = options.usage ? new DailyBudgets(options.usage, options.now) : undefined
  }

  /** Runs every check for a start by `principal`; throws the first refusal. Counts the start against its rate. */
  async admit(principal: JobPrincipal, request: AdmissionRequest): Promise<Admission> {
    const limits = await this.options.roleLimits.forRole(principal.role, principal.userId)
    assertModelsAllowed(limits.models, principal.role, request.models)
    if (request.workflow) assertWorkflowWithinLimits(request.workflow, limits)
    // Caps first: a start the caps refuse does not count against the rate.
    this.slots.check(principal, limits.jobsAtOnce, request.together ?? 1)
    await this.rate.consume(principal, limits.jobStartsPerMinute)
    if (!this.budgets) return { principal, limits, budget: new RunBudget(undefined, outputEstimateOf(limits)) }
    const first = request.firstRequest ?? { messages: [] }
    const estimate = estimateRequestTokens({ ...first, ...clampOutputTokens({ max_tokens: first.max_tokens }, limits.maxOutputTokens) }, outputEstimateOf(limits))
    return { principal, limits, budget: await this.budgets.admit(principal.userId, limits, estimate) }
  }

  /** The budget a resumed job of `userId` (role `role`) runs with; with nothing left, its first request is refused. */
  async budgetOnResume(userId: string, role: Role): Promise<RunBudget> {
    const limits = await this.options.roleLimits.forRole(role, userId)
    return this.budgets ? this.budgets.resume(userId, limits) : new RunBudget(undefined, outputEstimateOf(limits))
  }

  /** What `userId` (role `role`) has left of today's budget, their answers' reservations counted as used. */
  async budgetLeft(userId: string, role: Role): Promise<Allowance> {
    if (!this.budgets) return { tokens: Infinity, cost: Infinity }
    return this.budgets.left(userId, await this.options.roleLimits.forRole(role, userId))
  }
}

/** Lowers `max_tokens` (and the reasoning budget) of a request's fields to `maxOutputTokens`, or sets it when none is asked (0: no clamp). */
export function clampOutputTokens(fields: Record<string, unknown>, maxOutputTokens: number): Record<string, unknown> {
  if (maxOutputTokens <= 0) return fields
  const clamped = { ...fields }
  // Larger is lowered; none is set to it (documented on RoleLimits.maxOutputTokens).
  if (typeof clamped.max_tokens !== 'number' || clamped.max_tokens > maxOutputTokens) clamped.max_tokens = maxOutputTokens
  const reasoning = clamped.reasoning as { max_tokens?: unknown } | undefined
  if (reasoning && typeof reasoning.max_tokens === 'number' && reasoning.max_tokens > maxOutputTokens) clamped.reasoning = { ...reasoning, max_tokens: maxOutputTokens }
  return clamped
}
