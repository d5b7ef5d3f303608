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
  /** Documents one person may keep in the knowledge bases they own (whoever added them). */
  knowledgeDocuments: number
  /** Megabytes (MiB) of documents one person may keep in the knowledge bases they own. */
  knowledgeMegabytes: number
  /** Passages (about a thousand characters each) one person's documents may be cut into, in all. */
  knowledgePassages: number
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

/** One model's share of what a job used. */
export interface ModelSpend {
  model: string
  tokens: number
  cost: number
}

/** Usage of one principal with one model on one UTC day (`jobs`: the jobs that used the model). */
export interface ModelUsage extends DailyUsage {
  model: string
}

/** Most days a usage report covers. */
export const USAGE_REPORT_MAX_DAYS = 92

/** `GET /api/me/usage/history`: a person's usage by day and model over a span of UTC days, newest first. */
export interface MyUsageHistory {
  from: string
  to: string
  rows: Array<Omit<ModelUsage, 'userId'>>
}

/** One row of Admin → Usage: a person, a group or a model over a span of days. */
export interface UsageReportRow {
  /** The person's id, the group's name, or the model's id. */
  key: string
  /** What a person reads: a person's name ("Guest" for a guest), a group's name, a model's id. */
  label: string
  tokens: number
  cost: number
  jobs: number
  /** People counted in the row (a group's or a model's). */
  people: number
}

/** `GET /api/admin/usage/report`: usage over a span of days by person, group or model, most tokens first. */
export interface UsageReport {
  from: string
  to: string
  by: 'person' | 'group' | 'model'
  rows: UsageReportRow[]
  /** Rows were left out past the report's bound (the ledger's rows read, or rows listed). */
  truncated: boolean
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
