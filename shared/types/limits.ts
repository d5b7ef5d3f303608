/** What each role may do: the limits an admin sees and overrides per role, and a user's usage. */
import type { Role } from './account'

/** One role's limits. A 0 means "no limit" for the budgets and the output clamp. */
export interface RoleLimits {
  /** Models the role may use: comma-separated ids, or `*` for any. */
  models: string
  /** Answers and workflow runs one principal may have running at once. */
  jobsAtOnce: number
  /** Answers and workflow runs one principal may start per minute. */
  jobStartsPerMinute: number
  /** Tokens (prompt + completion) one principal may use per UTC day; 0: no budget. */
  dailyTokens: number
  /** Credits (as OpenRouter reports cost) one principal may spend per UTC day; 0: no budget. */
  dailyCost: number
  /** The largest `max_tokens` a request may ask for (larger is lowered, none is set to it); 0: as the model allows. */
  maxOutputTokens: number
  /** Model calls one workflow run may make at most (agent rounds × attempts, model routers × attempts). */
  workflowModelCalls: number
  /** Steps one workflow run may run at most, loops' iterations and child workflows' steps counted (each step × attempts). */
  workflowSteps: number
}

/** Every role's limits. */
export type RoleLimitTable = Record<Role, RoleLimits>

/** What an admin changed from the configured defaults, per role. */
export type RoleLimitOverrides = Partial<Record<Role, Partial<RoleLimits>>>

/** The limits as the admin page shows them: configured defaults, the admin's changes, and the result. */
export interface RoleLimitsView {
  defaults: RoleLimitTable
  overrides: RoleLimitOverrides
  effective: RoleLimitTable
}

/** Usage of one principal on one UTC day. */
export interface DailyUsage {
  userId: string
  /** `YYYY-MM-DD`, UTC. */
  day: string
  tokens: number
  cost: number
  /** Jobs whose usage was recorded. */
  jobs: number
}

/** What `GET /api/auth/usage` answers: today's usage against the role's budgets and what else applies. */
export interface MyUsage extends Omit<DailyUsage, 'userId'> {
  limits: RoleLimits
  /** When the day's budgets start again (ms since the epoch: the next midnight UTC). */
  resetsAt: number
}

/** One row of the admin page's usage table. */
export interface UserUsageRow extends DailyUsage {
  name: string
  role: Role
}
