/**
 * A workflow is data: nodes and edges, versioned, validated with zod. Node kinds: `start` (the
 * prompt), `agent` (a model with its own system prompt and tools, run through the chat tool
 * loop), `tool` (one server tool, arguments templated from earlier outputs), `router` (picks the
 * next branch by a condition or by asking a model), `approval` (asks the person who runs it, with
 * what came in shown; its edges are the branches `approve` and `reject`), `parallel` / `merge`
 * (fan out, join) and `output` (the run's answer). Templates: `{{prompt}}`, `{{input}}` (what flowed in),
 * `{{nodes.<id>}}` (an earlier node's output).
 */
import { z } from 'zod'

const id = z.string().trim().regex(/^[a-z][\w-]{0,62}$/i, 'use letters, digits, "_" or "-", starting with a letter')
const label = z.string().trim().max(80).optional()
const retries = z.number().int().min(0).max(5).optional()
const template = z.string().max(20_000)

const startNode = z.object({ id, kind: z.literal('start'), label })
const agentNode = z.object({
  id,
  kind: z.literal('agent'),
  label,
  model: z.string().trim().min(1).max(200).optional(),
  systemPrompt: z.string().max(20_000).default(''),
  /** What the agent is asked; default `{{input}}`. */
  prompt: template.optional(),
  /** Server tools it may call; default none. */
  tools: z.array(z.string().max(64)).max(50).default([]),
  maxToolRounds: z.number().int().min(0).max(20).default(3),
  retries,
})
const toolNode = z.object({
  id,
  kind: z.literal('tool'),
  label,
  tool: z.string().trim().min(1).max(64),
  /** Argument values; strings are templates. */
  arguments: z.record(z.string(), z.unknown()).default({}),
  retries,
})
const condition = z.object({
  branch: z.string().trim().min(1).max(40),
  /** Matches when the input contains this text (case-insensitive). */
  contains: z.string().min(1).max(200).optional(),
  /** Matches when the input matches this regular expression (case-insensitive). */
  matches: z.string().min(1).max(200).optional(),
})
const routerNode = z.object({
  id,
  kind: z.literal('router'),
  label,
  mode: z.enum(['condition', 'model']).default('condition'),
  conditions: z.array(condition).max(20).default([]),
  /** Model mode: what to decide; the model answers with one branch name. */
  instruction: z.string().max(4_000).optional(),
  model: z.string().trim().min(1).max(200).optional(),
  /** The branch taken when nothing matches. */
  defaultBranch: z.string().trim().min(1).max(40),
  retries,
})
const approvalNode = z.object({
  id,
  kind: z.literal('approval'),
  label,
  /** What the person is asked (a template); default "Continue with this?". What flowed in is shown with it. */
  question: template.optional(),
})
const parallelNode = z.object({ id, kind: z.literal('parallel'), label })
const mergeNode = z.object({ id, kind: z.literal('merge'), label })
const outputNode = z.object({ id, kind: z.literal('output'), label, template: template.optional() })

export const workflowNodeSchema = z.discriminatedUnion('kind', [startNode, agentNode, toolNode, routerNode, approvalNode, parallelNode, mergeNode, outputNode])

export const workflowEdgeSchema = z.object({
  from: z.string().min(1).max(64),
  to: z.string().min(1).max(64),
  /** For edges leaving a router: the branch name that takes this edge (an approval's: `approve` or `reject`). */
  branch: z.string().trim().min(1).max(40).optional(),
})

export const workflowDefinitionSchema = z.object({
  version: z.literal(1),
  name: z.string().trim().min(1, 'give the workflow a name').max(120),
  description: z.string().max(2_000).default(''),
  /** Model for agent and router nodes that do not name one. */
  defaultModel: z.string().trim().min(1).max(200).default('or3/offline-demo'),
  nodes: z.array(workflowNodeSchema).min(2, 'a workflow needs at least a start and an output node').max(50),
  edges: z.array(workflowEdgeSchema).max(200),
})

export type WorkflowDefinition = z.infer<typeof workflowDefinitionSchema>
export type WorkflowNode = z.infer<typeof workflowNodeSchema>
export type WorkflowEdge = z.infer<typeof workflowEdgeSchema>
export type WorkflowNodeKind = WorkflowNode['kind']
