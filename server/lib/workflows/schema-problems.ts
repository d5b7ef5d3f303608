/**
 * A schema problem of a workflow in words a person acts on, shown on the step it belongs to
 * ("Choose a tool for this step", "The name is too long: at most 80 characters") rather than in the
 * schema's terms ("nodes.3.label: Too big: expected string to have <=80 characters"). A message
 * the schema already words as a sentence of ours (it ends with a full stop) is kept as it is.
 */
import type { z } from 'zod'

/** What a field is called in a sentence, by its key (the last name of its path). */
const FIELD_NAMES: Record<string, string> = {
  name: 'the name',
  label: 'the name',
  description: 'the description',
  id: 'the id',
  kind: 'the kind of step',
  model: 'the model',
  defaultModel: 'the default model',
  systemPrompt: 'the instructions',
  prompt: 'what it is asked',
  instruction: 'the instruction',
  question: 'the question',
  tool: 'the tool',
  tools: 'the tools it may call',
  arguments: 'the tool\'s arguments',
  maxToolRounds: 'the tool rounds',
  retries: 'the number of retries',
  timeoutSeconds: 'the time limit',
  delaySeconds: 'the wait before a retry',
  maxDelaySeconds: 'the longest wait between retries',
  retry: 'the retry policy',
  backoff: 'the backoff',
  on: 'the failures that retry',
  template: 'the template',
  contains: '“contains”',
  matches: '“matches”',
  ask: 'the yes-or-no question',
  branch: 'the branch',
  defaultBranch: 'the default branch',
  conditions: 'the conditions',
  maxItems: 'the most items',
  maxIterations: 'the most iterations',
  concurrency: 'how many run at once',
  workflowId: 'the workflow',
  from: 'where the connection starts',
  to: 'where the connection leads',
  inputs: 'the inputs',
  choices: 'the choices',
  default: 'the default value',
  type: 'the type',
  nodes: 'the steps',
  edges: 'the connections',
}

/** The field an issue is about, as words ("the name", or the key in quotes when it has none of its own). */
function fieldName(path: ReadonlyArray<PropertyKey>): string {
  const key = [...path].reverse().find((part): part is string => typeof part === 'string')
  if (key === undefined) return 'the workflow'
  return FIELD_NAMES[key] ?? `“${key}”`
}

const capitalised = (text: string) => text.charAt(0).toUpperCase() + text.slice(1)
const count = (value: number | bigint) => Number(value).toLocaleString('en')
const quoted = (values: ReadonlyArray<unknown>) => values.map(value => `“${String(value)}”`).join(', ')

/** `issue` (at `path` within its step, or the workflow) as a sentence that says what to change. */
export function schemaProblemInWords(issue: z.core.$ZodIssue, path: ReadonlyArray<PropertyKey> = issue.path): string {
  if (issue.message.endsWith('.')) return issue.message
  const field = fieldName(path)
  const Field = capitalised(field)
  switch (issue.code) {
    case 'too_small':
      if (issue.origin === 'string') return Number(issue.minimum) <= 1 ? `Fill in ${field}.` : `${Field} is too short: at least ${count(issue.minimum)} characters.`
      if (issue.origin === 'array' || issue.origin === 'set') return `${Field} needs at least ${count(issue.minimum)}.`
      return `${Field} must be at least ${count(issue.minimum)}.`
    case 'too_big':
      if (issue.origin === 'string') return `${Field} is too long: at most ${count(issue.maximum)} characters.`
      if (issue.origin === 'array' || issue.origin === 'set') return `${Field} has too many: at most ${count(issue.maximum)}.`
      return `${Field} must be at most ${count(issue.maximum)}.`
    case 'invalid_type':
      if (issue.message.endsWith('received undefined')) return `${Field} is missing.`
      if (issue.expected === 'int') return `${Field} must be a whole number.`
      return `${Field} must be ${issue.expected === 'array' ? 'a list' : issue.expected === 'object' ? 'a set of named values' : `a ${issue.expected}`}.`
    case 'invalid_value':
      return `${Field} must be one of ${quoted(issue.values)}.`
    case 'unrecognized_keys':
      return `Remove ${quoted(issue.keys)}: ${path.length > 0 ? `${field} does` : 'a step of this kind does'} not take ${issue.keys.length === 1 ? 'it' : 'them'}.`
    case 'invalid_format':
      return `${Field} is not in the expected form${issue.format === 'regex' ? '' : ` (${issue.format})`}.`
    case 'invalid_union':
      if (path.at(-1) !== 'kind') return `${Field} is not in a form this step takes.`
      // A loop's body holds every kind but a loop.
      return issue.path.includes('body')
        ? 'A loop\'s steps cannot be loops (or a kind there is not): use start, agent, tool, router, approval, parallel, merge, workflow or output. To repeat within a repeat, run a workflow with its own loop.'
        : 'Unknown kind of step: use start, agent, tool, router, approval, parallel, merge, loop, workflow or output.'
    default:
      return `${Field}: ${issue.message}.`
  }
}
