/**
 * A workflow is data: nodes and edges, versioned, validated with zod. Node kinds: `start` (the
 * prompt), `agent` (a model with its own system prompt and tools, run through the chat tool
 * loop), `tool` (one server tool, arguments templated from earlier outputs), `router` (picks the
 * next branch by a condition or by asking a model), `approval` (asks the person who runs it, with
 * what came in shown; its edges are the branches `approve` and `reject`), `parallel` / `merge`
 * (fan out, join), `workflow` (runs another saved workflow as a child run), `loop` (runs its body, a small graph of its own, for each item of a list or
 * until a condition holds) and `output` (the run's answer). Templates: `{{prompt}}`, `{{input}}` (what flowed in),
 * `{{nodes.<id>}}` (an earlier node's output), and in a loop's body `{{item}}`, `{{index}}` and `{{previous}}`.
 */
import { z } from 'zod'
import { RETRYABLE_STEP_ERRORS } from '../types/workflow-retry'
import { KNOWLEDGE_BASES_PER_CHAT } from '../types/knowledge'

const id = z.string().trim().regex(/^[a-z][\w-]{0,62}$/i, 'use letters, digits, "_" or "-", starting with a letter')
const label = z.string().trim().max(80).optional()
/** How many more times a step runs after it fails for a reason another try may cure. */
const retries = z.number().int().min(0).max(10).optional()
/**
 * How a step waits between tries: `fixed` waits `delaySeconds` each time; `exponential` doubles it
 * from `delaySeconds` up to `maxDelaySeconds`, each wait drawn between its half and its whole
 * (jitter, so many runs do not retry at the same moment). `on`: which failures retry (default all four).
 */
const retryPolicy = z.object({
  backoff: z.enum(['fixed', 'exponential']).default('exponential'),
  delaySeconds: z.number().min(0).max(3_600).default(1),
  maxDelaySeconds: z.number().min(0).max(86_400).default(60),
  on: z.array(z.enum(RETRYABLE_STEP_ERRORS)).min(1, 'name at least one kind of failure to retry, or remove the retry policy').max(4).optional(),
}).strict().optional()
/** Longest one try of a step may take before it is stopped as timed out (it may then be retried). */
const timeoutSeconds = z.number().int().min(1).max(86_400).optional()
const template = z.string().max(20_000)
/** Where the visual editor draws the node (no effect on a run); absent: laid out automatically. */
const position = z.object({ x: z.number().finite().min(-100_000).max(100_000), y: z.number().finite().min(-100_000).max(100_000) }).strict().optional()

const startNode = z.object({ id, kind: z.literal('start'), label, position })
const agentNode = z.object({
  id,
  kind: z.literal('agent'),
  label,
  position,
  model: z.string().trim().min(1).max(200).optional(),
  systemPrompt: z.string().max(20_000).default(''),
  /** What the agent is asked; default `{{input}}`. */
  prompt: template.optional(),
  /** Server tools it may call; default none. */
  tools: z.array(z.string().max(64)).max(50).default([]),
  /** Knowledge bases it searches (`search_knowledge`, offered with them), the owner's or their groups'; default none. */
  knowledgeBaseIds: z.array(z.string().trim().min(1).max(64)).max(KNOWLEDGE_BASES_PER_CHAT, `must be at most ${KNOWLEDGE_BASES_PER_CHAT} knowledge bases`).optional(),
  maxToolRounds: z.number().int().min(0).max(20).default(3),
  retries,
  retry: retryPolicy,
  timeoutSeconds,
})
const toolNode = z.object({
  id,
  kind: z.literal('tool'),
  label,
  position,
  tool: z.string().trim().min(1, 'Choose the tool this step calls.').max(64),
  /** Argument values; strings are templates. */
  arguments: z.record(z.string(), z.unknown()).default({}),
  retries,
  retry: retryPolicy,
  timeoutSeconds,
})
const condition = z.object({
  branch: z.string().trim().min(1, 'Name the branch this condition takes.').max(40),
  /** Matches when the input contains this text (case-insensitive). */
  contains: z.string().min(1).max(200).optional(),
  /** Matches when the input matches this regular expression (case-insensitive). */
  matches: z.string().min(1).max(200).optional(),
})
const routerNode = z.object({
  id,
  kind: z.literal('router'),
  label,
  position,
  mode: z.enum(['condition', 'model']).default('condition'),
  conditions: z.array(condition).max(20).default([]),
  /** Model mode: what to decide; the model answers with one branch name. */
  instruction: z.string().max(4_000).optional(),
  model: z.string().trim().min(1).max(200).optional(),
  /** The branch taken when nothing matches. */
  defaultBranch: z.string().trim().min(1, 'Name the branch taken when no condition matches.').max(40),
  retries,
  retry: retryPolicy,
  timeoutSeconds,
})
const approvalNode = z.object({
  id,
  kind: z.literal('approval'),
  label,
  position,
  /** What the person is asked (a template); default "Continue with this?". What flowed in is shown with it. */
  question: template.optional(),
})
/** How deep workflows may call workflows (a workflow step in the called workflow counts one more). */
export const MAX_WORKFLOW_DEPTH = 3

/**
 * A workflow step: runs another saved workflow of the same owner as a child run, with a prompt and
 * named inputs templated from earlier steps; its answer is the child's output.
 */
const workflowCallNode = z.object({
  id,
  kind: z.literal('workflow'),
  label,
  position,
  workflowId: z.string().trim().min(1, 'Choose the workflow this step runs.').regex(/^[\w-]{1,100}$/, 'must be a workflow id'),
  /** The child's prompt; default `{{input}}`. */
  prompt: template.optional(),
  /** The child's named inputs, by name (templates). */
  inputs: z.record(z.string().max(40), template).refine(inputs => Object.keys(inputs).length <= 20, 'at most 20 inputs').default({}),
  retries,
  retry: retryPolicy,
  timeoutSeconds,
})
const parallelNode = z.object({ id, kind: z.literal('parallel'), label, position })
const mergeNode = z.object({ id, kind: z.literal('merge'), label, position })
const outputNode = z.object({ id, kind: z.literal('output'), label, position, template: template.optional() })

export const workflowEdgeSchema = z.object({
  from: z.string().min(1).max(64),
  to: z.string().min(1).max(64),
  /** For edges leaving a router: the branch name that takes this edge (an approval's: `approve` or `reject`). */
  branch: z.string().trim().min(1).max(40).optional(),
})

/** The node kinds a loop's body may hold (every kind but another loop). */
const bodyNodeSchema = z.discriminatedUnion('kind', [startNode, agentNode, toolNode, routerNode, approvalNode, parallelNode, mergeNode, outputNode, workflowCallNode])

/** Most items a for-each loop takes, and most times an until loop runs its body. */
export const MAX_LOOP_ITEMS = 100
export const MAX_LOOP_ITERATIONS = 20
export const MAX_LOOP_CONCURRENCY = 5

/** When an until loop stops: its body's result contains a text, matches a pattern, or a model says yes. */
const untilCondition = z.object({
  contains: z.string().min(1).max(200).optional(),
  /** A regular expression (case-insensitive; RE2: no back-references or look-arounds). */
  matches: z.string().min(1).max(200).optional(),
  /** A yes-or-no question a model answers about the result ("Does the critic approve?"); yes ends the loop. */
  ask: z.string().min(1).max(4_000).optional(),
  model: z.string().trim().min(1).max(200).optional(),
}).strict()

/**
 * A loop: its `body` is a graph of its own (a start, steps, an output) run once per iteration.
 * `for-each` runs it for every item of `items` (a template; what it renders to is read as a JSON
 * array, else as its non-empty lines), `concurrency` at a time, and collects the results in order;
 * `until` runs it again and again (the next iteration is given the last one's result) until `until`
 * holds or `maxIterations` ran. In the body, `{{item}}` is the item (or what the iteration was
 * given), `{{index}}` its number from 1, `{{previous}}` the last iteration's result.
 */
const loopNode = z.object({
  id,
  kind: z.literal('loop'),
  label,
  position,
  mode: z.enum(['for-each', 'until']),
  /** For each: the list, default `{{input}}`. */
  items: template.optional(),
  maxItems: z.number().int().min(1).max(MAX_LOOP_ITEMS).default(20),
  concurrency: z.number().int().min(1).max(MAX_LOOP_CONCURRENCY).default(1),
  /** For each: the results as text, one after another, or as a JSON array of texts. */
  collect: z.enum(['text', 'json']).default('text'),
  until: untilCondition.optional(),
  maxIterations: z.number().int().min(1).max(MAX_LOOP_ITERATIONS).default(5),
  /** Until: when `maxIterations` ran and it still does not hold, go on with the last result, or fail. */
  onLimit: z.enum(['last', 'fail']).default('last'),
  body: z.object({
    nodes: z.array(bodyNodeSchema).min(2, 'a loop\'s body needs at least a start and an output node').max(30),
    edges: z.array(workflowEdgeSchema).max(100),
  }),
})

export const workflowNodeSchema = z.discriminatedUnion('kind', [startNode, agentNode, toolNode, routerNode, approvalNode, parallelNode, mergeNode, outputNode, loopNode, workflowCallNode])

/** Kinds of named input a workflow may declare (its run form has a field of each). */
export const WORKFLOW_INPUT_TYPES = ['text', 'long-text', 'number', 'boolean', 'choice', 'attachment'] as const

/** Largest file an `attachment` input takes: a UTF-8 text file, read into its templates as text. */
export const MAX_INPUT_ATTACHMENT_BYTES = 400 * 1024

/** Longest value a text input takes; a long-text one takes the prompt's 100,000. */
export const MAX_INPUT_TEXT_CHARS = 2_000
export const MAX_INPUT_LONG_TEXT_CHARS = 100_000

/**
 * One named input of a workflow: `{{inputs.<name>}}` in its templates, a field of its run form,
 * checked at run time (400 naming the input).
 */
export const workflowInputSchema = z.object({
  name: z.string().regex(/^[a-z][a-z0-9_]{0,39}$/i, 'an input name is a letter, then up to 39 letters, digits or _'),
  label: z.string().trim().min(1).max(80).optional(),
  description: z.string().max(300).optional(),
  type: z.enum(WORKFLOW_INPUT_TYPES),
  required: z.boolean().default(false),
  default: z.union([z.string().max(MAX_INPUT_TEXT_CHARS), z.number().finite(), z.boolean()]).optional(),
  /** A `choice` input's choices. */
  choices: z.array(z.string().trim().min(1).max(100)).min(1).max(50).optional(),
}).superRefine((input, context) => {
  if (input.type === 'choice' && !input.choices) context.addIssue({ code: 'custom', path: ['choices'], message: 'a choice input lists its choices' })
  if (input.type !== 'choice' && input.choices) context.addIssue({ code: 'custom', path: ['choices'], message: 'only a choice input has choices' })
  if (input.type === 'attachment' && input.default !== undefined) context.addIssue({ code: 'custom', path: ['default'], message: 'an attachment input has no default' })
  if (input.default === undefined || input.type === 'attachment') return
  const fits = input.type === 'number' ? typeof input.default === 'number'
    : input.type === 'boolean' ? typeof input.default === 'boolean'
      : input.type === 'choice' ? typeof input.default === 'string' && (input.choices ?? []).includes(input.default)
        : typeof input.default === 'string'
  if (!fits) context.addIssue({ code: 'custom', path: ['default'], message: input.type === 'choice' ? 'the default must be one of the choices' : `the default must be a ${input.type === 'long-text' ? 'text' : input.type}` })
})

/**
 * What happens when a run of the workflow fails: another of the owner's workflows runs with the
 * failure as its inputs (failure-handlers.ts), and/or the owner gets a notification even when a
 * tab watched the run. A run started this way that fails starts nothing further.
 */
const onFailureSchema = z.object({
  workflowId: z.string().trim().regex(/^[\w-]{1,100}$/, 'must be a workflow id').optional(),
  notify: z.boolean().optional(),
}).strict().refine(handler => handler.workflowId !== undefined || handler.notify === true, 'name a workflow to run, or ask to be notified, or remove onFailure')

export const workflowDefinitionSchema = z.object({
  version: z.literal(1),
  name: z.string().trim().min(1, 'give the workflow a name').max(120),
  description: z.string().max(2_000).default(''),
  /** Model for agent and router nodes that do not name one. */
  defaultModel: z.string().trim().min(1).max(200).default('or3/offline-demo'),
  /** Named inputs a run takes (none: a run takes one prompt). */
  inputs: z.array(workflowInputSchema).max(20).optional().superRefine((inputs, context) => {
    const seen = new Set<string>()
    for (const [index, input] of (inputs ?? []).entries()) {
      if (seen.has(input.name)) context.addIssue({ code: 'custom', path: [index, 'name'], message: `two inputs are named "${input.name}"` })
      seen.add(input.name)
    }
  }),
  nodes: z.array(workflowNodeSchema).min(2, 'a workflow needs at least a start and an output node').max(50),
  edges: z.array(workflowEdgeSchema).max(200),
  onFailure: onFailureSchema.optional(),
})

export type WorkflowDefinition = z.infer<typeof workflowDefinitionSchema>
export type WorkflowInput = z.infer<typeof workflowInputSchema>
export type WorkflowFailureHandler = z.infer<typeof onFailureSchema>
export type WorkflowNode = z.infer<typeof workflowNodeSchema>
export type WorkflowEdge = z.infer<typeof workflowEdgeSchema>
export type WorkflowNodeKind = WorkflowNode['kind']
export type WorkflowLoopNode = Extract<WorkflowNode, { kind: 'loop' }>
export type WorkflowCallNode = Extract<WorkflowNode, { kind: 'workflow' }>
/** A node of a loop's body. */
export type WorkflowBodyNode = z.infer<typeof bodyNodeSchema>
