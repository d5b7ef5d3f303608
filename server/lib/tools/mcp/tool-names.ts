/**
 * Registry names for MCP tools: `<server>__<tool>` within OpenAI's function-name rules
 * (`^[a-zA-Z0-9_-]{1,64}$`). Characters outside them become `_`; a name too long, or one that
 * collides with another tool of the same server after that, is shortened and given a suffix from
 * a hash of the original name, so the same tool always gets the same name.
 */
import { createHash } from 'node:crypto'

const MAX_NAME = 64

function suffixOf(toolName: string): string {
  return createHash('sha256').update(toolName).digest('hex').slice(0, 6)
}

/** The registry name of each of `toolNames` (in the same order) for server `server`. */
export function mcpToolNames(server: string, toolNames: readonly string[]): string[] {
  const taken = new Set<string>()
  const names: string[] = []
  // Names that are already valid claim theirs first; then the others, sorted, so which of two
  // colliding tools keeps the plain name never depends on the order the server lists them in.
  const plainOf = (name: string) => `${server}__${name.replace(/[^a-zA-Z0-9_-]/g, '_')}`
  const isExact = (name: string) => plainOf(name) === `${server}__${name}` && plainOf(name).length <= MAX_NAME
  const order = toolNames.map((name, index) => ({ name, index }))
    .sort((a, b) => Number(isExact(b.name)) - Number(isExact(a.name)) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  for (const { name, index } of order) {
    const plain = plainOf(name)
    const suffix = suffixOf(name)
    const chosen = plain.length <= MAX_NAME && !taken.has(plain) ? plain : `${plain.slice(0, MAX_NAME - suffix.length - 1)}_${suffix}`
    taken.add(chosen)
    names[index] = chosen
  }
  return names
}
