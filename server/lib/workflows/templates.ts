/**
 * `{{prompt}}`, `{{input}}`, `{{inputs.<name>}}`, `{{nodes.<id>}}` and, in a loop's body, `{{item}}`,
 * `{{index}}` and `{{previous}}`, in workflow prompts and tool arguments. A template
 * is small (the schema caps it) but what it refers to can be large, so rendering counts the
 * result as it goes and stops at a character budget: a template that repeats a long prompt
 * thousands of times fails with `TemplateTooLargeError` before the text is ever built.
 */

/** What templates can refer to. */
export interface TemplateScope {
  prompt: string
  input: string
  nodes: Record<string, string | undefined>
  /** The run's named inputs, as text (none for a workflow that takes a prompt). */
  inputs?: Record<string, string | undefined>
  /** In a loop's body: the iteration's item (or what it was given), its number from 1, and the last iteration's result. */
  loop?: { item: string, index: number, previous: string }
}

/** Raised when a rendered template would pass its character budget. */
export class TemplateTooLargeError extends Error {
  override name = 'TemplateTooLargeError'
  constructor(readonly maxChars: number) {
    super(`the filled-in template would be longer than ${maxChars.toLocaleString('en')} characters, the most a step may produce; refer to less text (for example {{input}} once rather than many times)`)
  }
}

const REFERENCE = /\{\{\s*(prompt|input|item|index|previous|nodes\.([\w-]+)|inputs\.(\w+))\s*\}\}/g

function valueOf(scope: TemplateScope, name: string, nodeId: string | undefined, inputName?: string): string {
  if (nodeId) return scope.nodes[nodeId] ?? ''
  if (inputName) return scope.inputs?.[inputName] ?? ''
  switch (name) {
    case 'prompt': return scope.prompt
    case 'item': return scope.loop?.item ?? ''
    case 'index': return scope.loop ? String(scope.loop.index) : ''
    case 'previous': return scope.loop?.previous ?? ''
    default: return scope.input
  }
}

/** Characters a rendering may still add; shared by every string of one rendering. */
interface Budget { left: number, max: number }

function render(template: string, scope: TemplateScope, budget: Budget): string {
  // First measure, then build: the text is only concatenated once it is known to fit.
  const matches = [...template.matchAll(REFERENCE)]
  let length = template.length
  for (const match of matches) length -= match[0].length
  for (const match of matches) {
    length += valueOf(scope, match[1]!, match[2], match[3]).length
    if (length > budget.left) throw new TemplateTooLargeError(budget.max)
  }
  if (length > budget.left) throw new TemplateTooLargeError(budget.max)
  budget.left -= length
  return template.replace(REFERENCE, (_match, name: string, nodeId?: string, inputName?: string) => valueOf(scope, name, nodeId, inputName))
}

/** Fills a template; unknown references become empty text. Throws `TemplateTooLargeError` past `maxChars`. */
export function renderTemplate(template: string, scope: TemplateScope, maxChars = Number.POSITIVE_INFINITY): string {
  return render(template, scope, { left: maxChars, max: maxChars })
}

/** Fills every string inside tool arguments (objects and arrays included), all within one budget. */
export function renderArguments(value: unknown, scope: TemplateScope, maxChars = Number.POSITIVE_INFINITY): unknown {
  const budget = { left: maxChars, max: maxChars }
  const fill = (item: unknown): unknown => {
    if (typeof item === 'string') return render(item, scope, budget)
    if (Array.isArray(item)) return item.map(fill)
    if (item && typeof item === 'object') return Object.fromEntries(Object.entries(item).map(([key, inner]) => [key, fill(inner)]))
    return item
  }
  return fill(value)
}
