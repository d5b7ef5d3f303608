/** The admin's per-role limit changes, validated the same way by the admin page and the server. */
import { z } from 'zod'

const count = (max: number) => z.number().int().min(0).max(max)

/** One role's changes; every field optional (absent: the configured default). */
export const roleLimitsPatch = z.object({
  models: z.string().trim().min(1, 'must be * (any model) or comma-separated model ids').max(4_000)
    .refine(value => value === '*' || value.split(',').every(item => /^[\w.:/-]{1,200}$/.test(item.trim())), 'must be * or comma-separated model ids such as or3/offline-demo,openai/gpt-4o-mini'),
  jobsAtOnce: count(1_000).min(1, 'must be at least 1'),
  jobStartsPerMinute: count(100_000).min(1, 'must be at least 1'),
  dailyTokens: count(1_000_000_000_000),
  dailyCost: z.number().min(0).max(1_000_000),
  maxOutputTokens: count(10_000_000),
  workflowModelCalls: count(100_000).min(1, 'must be at least 1'),
  workflowSteps: count(100_000).min(1, 'must be at least 1'),
  knowledgeDocuments: count(1_000_000).min(1, 'must be at least 1'),
  knowledgeMegabytes: count(1_000_000).min(1, 'must be at least 1'),
  knowledgePassages: count(100_000_000).min(1, 'must be at least 1'),
}).partial().strict()

/** The body of `PUT /api/admin/limits`: changes per role (a role left out keeps its defaults). */
export const roleLimitOverridesBody = z.object({
  admin: roleLimitsPatch.optional(),
  user: roleLimitsPatch.optional(),
  guest: roleLimitsPatch.optional(),
}).strict()

/** A group's name: as identity providers' groups claims name groups (and `group:<name>` in tool policies). */
export const groupName = z.string().trim().min(1).max(64).regex(/^[\w .-]+$/, 'must be 1-64 letters, digits, spaces, ".", "_" or "-"')

/** The body of `PUT /api/admin/groups/:name`: a group's description and the limits it gives its members. */
export const groupBody = z.object({
  description: z.string().trim().max(500).default(''),
  limits: roleLimitsPatch.default({}),
  defaultModel: z.string().trim().max(200).regex(/^(?:[\w.:/-]+)?$/, 'must be a model id such as openai/gpt-4o-mini').optional(),
  instructions: z.string().trim().max(4_000, 'must be at most 4,000 characters').optional(),
}).strict()

/** The body of `PUT /api/admin/users/:id/groups`: the groups an admin puts a person in. */
export const memberGroupsBody = z.object({
  groups: z.array(groupName).max(100),
}).strict()
