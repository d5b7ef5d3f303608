/**
 * What a run of a workflow is given: its named inputs, checked against what the workflow declares
 * (zod, built from the declarations: a 400 names each input at fault), and the prompt. A workflow
 * without inputs takes one prompt; one with inputs takes `{inputs}` (its defaults fill what is
 * left out), and its prompt, for steps that use `{{prompt}}`, is the given one or the inputs
 * written out one per line.
 */
import { z } from 'zod'
import { MAX_INPUT_ATTACHMENT_BYTES, MAX_INPUT_LONG_TEXT_CHARS, MAX_INPUT_TEXT_CHARS, type WorkflowDefinition, type WorkflowInput } from '../../../shared/schemas/workflow'
import { DomainError, type HttpAnswer } from '../domain-error'

/** Longest prompt a run takes. */
export const MAX_RUN_PROMPT_CHARS = 100_000

/** A run's inputs as templates see them: each as text. */
export type RunInputs = Record<string, string>

/** Refused inputs: 400, naming each input and what to fix. */
export class WorkflowInputError extends DomainError {
  override name = 'WorkflowInputError'
  constructor(readonly problems: Array<{ input: string, message: string }>) {
    super(`Check the workflow's inputs: ${problems.map(problem => `${problem.input}: ${problem.message}`).join('; ')}.`)
  }

  httpAnswer(): HttpAnswer {
    return { statusCode: 400, statusMessage: 'Invalid inputs', message: this.message, data: { problems: this.problems } }
  }
}

/** How a file given to an `attachment` input reads in templates: its name, then its text. */
export function attachmentInputText(name: string, text: string): string {
  return `File “${name}”:\n\n${text}`
}

/**
 * An `attachment` input's file (`{ name, data }`, base64): a UTF-8 text file without NUL bytes, at
 * most `MAX_INPUT_ATTACHMENT_BYTES`, read as its text. A run again sends the text it kept.
 */
const attachmentFile = z.object({
  name: z.string().trim().min(1, 'the file needs a name').max(200),
  data: z.string().max(Math.ceil(MAX_INPUT_ATTACHMENT_BYTES / 3) * 4 + 4, `the file is larger than ${MAX_INPUT_ATTACHMENT_BYTES / 1024} KB`).regex(/^[A-Za-z0-9+/]*={0,2}$/, 'the file must be sent as base64'),
}, { error: 'must be a file: { name, data } with the file\'s bytes in base64' }).strict()

const attachmentValue = z.unknown().transform((value, context) => {
  if (typeof value === 'string') {
    if (value.length <= MAX_INPUT_LONG_TEXT_CHARS + 300) return value
    context.addIssue({ code: 'custom', message: `the file's text is longer than ${MAX_INPUT_LONG_TEXT_CHARS} characters` })
    return z.NEVER
  }
  const file = attachmentFile.safeParse(value)
  if (!file.success) {
    context.addIssue({ code: 'custom', message: file.error.issues[0]?.message ?? 'must be a file' })
    return z.NEVER
  }
  const bytes = Buffer.from(file.data.data, 'base64')
  let text: string | undefined
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    text = undefined
  }
  if (bytes.length === 0 || text === undefined || text.includes('\u0000')) {
    context.addIssue({ code: 'custom', message: `“${file.data.name}” is not a text file; this input takes a UTF-8 text file (.txt, .md, .csv, .json…)` })
    return z.NEVER
  }
  if (text.length > MAX_INPUT_LONG_TEXT_CHARS) {
    context.addIssue({ code: 'custom', message: `“${file.data.name}” has more than ${MAX_INPUT_LONG_TEXT_CHARS.toLocaleString('en')} characters; give a shorter file` })
    return z.NEVER
  }
  // eslint-disable-next-line no-control-regex
  return attachmentInputText(file.data.name.replace(/[\u0000-\u001F\u007F]/g, ''), text)
})

function valueSchema(input: WorkflowInput): z.ZodType {
  switch (input.type) {
    // A number or a yes/no also comes as the text a run keeps ("50", "true"): a run again sends that.
    case 'number': return z.union([z.number().finite(), z.string().trim().regex(/^-?\d{1,15}(?:\.\d{1,15})?$/, 'must be a number').transform(Number)], { error: 'must be a number' })
    case 'boolean': return z.union([z.boolean(), z.enum(['true', 'false']).transform(value => value === 'true')], { error: 'must be true or false' })
    case 'choice': return z.enum(input.choices as [string, ...string[]], { error: `pick one of: ${input.choices!.join(', ')}` })
    case 'long-text': return z.string().max(MAX_INPUT_LONG_TEXT_CHARS)
    case 'attachment': return attachmentValue
    default: return z.string().max(MAX_INPUT_TEXT_CHARS)
  }
}

/** How an input's value reads in a template. */
function asText(value: unknown): string {
  return typeof value === 'string' ? value : value === undefined ? '' : String(value)
}

/**
 * The inputs and prompt of a run of `workflow`, from what a request gave; throws
 * `WorkflowInputError` naming each input at fault (and the prompt, when one is needed and missing).
 */
export function runInputsOf(workflow: WorkflowDefinition, given: { prompt?: string, inputs?: Record<string, unknown> }): { prompt: string, inputs: RunInputs } {
  const declared = workflow.inputs ?? []
  const prompt = given.prompt?.trim() ?? ''
  if (declared.length === 0) {
    if (!prompt) throw new WorkflowInputError([{ input: 'prompt', message: 'give the workflow a prompt' }])
    return { prompt, inputs: {} }
  }
  const raw = given.inputs ?? {}
  const problems: Array<{ input: string, message: string }> = []
  for (const name of Object.keys(raw)) {
    if (!declared.some(input => input.name === name)) problems.push({ input: name, message: `this workflow has no such input (it takes ${declared.map(input => input.name).join(', ')})` })
  }
  const inputs: RunInputs = {}
  for (const input of declared) {
    let value = raw[input.name]
    // An empty text counts as not given.
    if (value === undefined || value === null || value === '') value = input.default
    if (value === undefined) {
      if (input.required) problems.push({ input: input.name, message: 'required' })
      inputs[input.name] = ''
      continue
    }
    const checked = valueSchema(input).safeParse(value)
    if (!checked.success) problems.push({ input: input.name, message: checked.error.issues[0]?.message ?? 'does not fit' })
    else inputs[input.name] = asText(checked.data)
  }
  if (problems.length > 0) throw new WorkflowInputError(problems)
  const written = declared.map(input => `${input.label ?? input.name}: ${inputs[input.name]}`).join('\n')
  return { prompt: (prompt || written).slice(0, MAX_RUN_PROMPT_CHARS), inputs }
}
