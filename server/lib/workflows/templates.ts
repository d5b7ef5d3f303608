/** `{{prompt}}`, `{{input}}` and `{{nodes.<id>}}` in workflow prompts and tool arguments. */

/** What templates can refer to. */
export interface TemplateScope {
  prompt: string
  input: string
  nodes: Record<string, string | undefined>
}

/** Fills a template; unknown references become empty text. */
export function renderTemplate(template: string, scope: TemplateScope): string {
  return template.replace(/\{\{\s*(prompt|input|nodes\.([\w-]+))\s*\}\}/g, (_match, name: string, nodeId?: string) => {
    if (nodeId) return scope.nodes[nodeId] ?? ''
    return name === 'prompt' ? scope.prompt : scope.input
  })
}

/** Fills every string inside tool arguments (objects and arrays included). */
export function renderArguments(value: unknown, scope: TemplateScope): unknown {
  if (typeof value === 'string') return renderTemplate(value, scope)
  if (Array.isArray(value)) return value.map(item => renderArguments(item, scope))
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, renderArguments(item, scope)]))
  return value
}
