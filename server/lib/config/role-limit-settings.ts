/**
 * Each role's limits as settings (`limits.roles.<role>.*` of server-config.ts): their defaults, and
 * what each means, said once for admins.
 */
import type { Role } from '../../../shared/types/account'
import type { z } from 'zod'
import type { RoleLimits } from '../../../shared/types/limits'
import { budget, group, modelList, positiveInt, setting } from './setting-types'

/** Each role's limits by default (the admin can change each on the admin page). */
const ROLE_LIMIT_DEFAULTS: Record<Role, RoleLimits> = {
  admin: { models: '*', jobsAtOnce: 10, jobStartsPerMinute: 60, dailyTokens: 0, dailyCost: 0, maxOutputTokens: 0, workflowModelCalls: 500, workflowSteps: 5_000, knowledgeDocuments: 5_000, knowledgeMegabytes: 1_000, knowledgePassages: 1_000_000 },
  user: { models: '*', jobsAtOnce: 5, jobStartsPerMinute: 20, dailyTokens: 2_000_000, dailyCost: 0, maxOutputTokens: 16_384, workflowModelCalls: 200, workflowSteps: 1_000, knowledgeDocuments: 1_000, knowledgeMegabytes: 200, knowledgePassages: 200_000 },
  guest: { models: 'or3/offline-demo', jobsAtOnce: 2, jobStartsPerMinute: 10, dailyTokens: 200_000, dailyCost: 0, maxOutputTokens: 4_096, workflowModelCalls: 50, workflowSteps: 100, knowledgeDocuments: 20, knowledgeMegabytes: 10, knowledgePassages: 5_000 },
}

/** What each role limit means (said once, for admins; the other roles' read "The same for …"). */
const ROLE_LIMIT_MEANINGS: Record<keyof RoleLimits, string> = {
  models: 'Models this role may use: comma-separated ids, or `*` for any. Another model: 403 naming it (at a chat start, and when a workflow is saved or run); `GET /api/models` lists only these.',
  jobsAtOnce: 'Answers and workflow runs one principal of this role may have running at once (and never more than the fair share); past it: 429 with `Retry-After`.',
  jobStartsPerMinute: 'Answers and workflow runs one principal of this role may start per minute; past it: 429 with `Retry-After`.',
  dailyTokens: 'Tokens (prompt + completion, as the upstream reports them) one principal may use per UTC day; `0`: no budget. Used up: new starts get 402 with `Retry-After` until midnight UTC (429 while the rest is reserved by answers under way); a running job stops with an `over-budget` error, its text kept.',
  dailyCost: 'The same in credits (the `cost` OpenRouter reports); `0`: no budget.',
  maxOutputTokens: 'The largest `max_tokens` (and reasoning `max_tokens`) a request may ask for: a larger one is lowered to it; workflow agents get it as their `max_tokens`. `0`: no clamp.',
  workflowModelCalls: 'Model calls one workflow run may make at most, counted from the definition (each agent: (`maxToolRounds` + 1) × attempts; each model router: attempts; a loop: its body\'s × `maxItems` or `maxIterations`). More: 400 naming the count, when saved and when run.',
  workflowSteps: 'Steps one workflow run may run at most, counted from the definition before they start: each step × its attempts, a loop\'s body × `maxItems` or `maxIterations`, a workflow step\'s child counted (and reserved) when it starts. More: 400 naming the count when saved and run; a child past what is left fails its step saying so. Bounds what one run (a guest\'s too) can make the server do without a model call.',
  knowledgeDocuments: 'Documents one person of this role may keep in the knowledge bases they own, whoever added them (a base shared to edit counts against its owner). More: 409 saying so.',
  knowledgeMegabytes: 'Megabytes (MiB) of documents one person of this role may keep in the knowledge bases they own. More: 409 saying so.',
  knowledgePassages: 'Passages (about a thousand characters each) the documents of one person of this role may be cut into, in all: a document that would go past it is marked failed when it is indexed, saying so, and none is added while none are left.',
}

/** One role's limits (shared/types/limits.ts), with its defaults. */
export function roleLimits(role: Role) {
  const defaults = ROLE_LIMIT_DEFAULTS[role]
  const meaning = (key: keyof RoleLimits) => (role === 'admin' ? ROLE_LIMIT_MEANINGS[key] : `The same for ${role}s.`)
  return group({
    models: setting(modelList, defaults.models, meaning('models')),
    jobsAtOnce: setting(positiveInt, defaults.jobsAtOnce, meaning('jobsAtOnce')),
    jobStartsPerMinute: setting(positiveInt, defaults.jobStartsPerMinute, meaning('jobStartsPerMinute')),
    dailyTokens: setting(budget.int(), defaults.dailyTokens, meaning('dailyTokens')),
    dailyCost: setting(budget, defaults.dailyCost, meaning('dailyCost')),
    maxOutputTokens: setting(budget.int(), defaults.maxOutputTokens, meaning('maxOutputTokens')),
    workflowModelCalls: setting(positiveInt, defaults.workflowModelCalls, meaning('workflowModelCalls')),
    workflowSteps: setting(positiveInt, defaults.workflowSteps, meaning('workflowSteps')),
    knowledgeDocuments: setting(positiveInt.max(1_000_000), defaults.knowledgeDocuments, meaning('knowledgeDocuments')),
    knowledgeMegabytes: setting(positiveInt.max(1_000_000), defaults.knowledgeMegabytes, meaning('knowledgeMegabytes')),
    knowledgePassages: setting(positiveInt.max(100_000_000), defaults.knowledgePassages, meaning('knowledgePassages')),
  }) satisfies z.ZodType<RoleLimits>
}
