/**
 * Which tools a model is offered when there are many. Models choose worse, and requests grow, as
 * the tool list grows; past `maxOffered` tools the model gets the ones most relevant to the
 * conversation, the ones it found earlier in this answer, and `find_tools`, which searches every
 * enabled tool's name and description and makes what it finds available from the next request.
 * Relevance is word overlap (names weigh more than descriptions): linear in the text, no
 * patterns built from user input.
 */
import type { OpenRouterToolDefinition } from '../openrouter/types'

/** The name of the search tool the loop answers itself. */
export const FIND_TOOLS = 'find_tools'

/** Characters of the conversation read to rank tools, and of a query. */
const MAX_TEXT = 2_000
/** Tools `find_tools` returns at most. */
const MAX_FOUND = 10

export const findToolsDefinition: OpenRouterToolDefinition = {
  type: 'function',
  function: {
    name: FIND_TOOLS,
    description: 'Search the other tools available on this server by what they do (words of their names and descriptions). The tools found can be called from your next step.',
    parameters: {
      type: 'object',
      properties: {
        query: { type: 'string', description: 'What the tool should do, e.g. "convert currency" or "read a file".' },
      },
      required: ['query'],
    },
  },
}

/** Words too common to say anything about what a tool does. */
const STOP_WORDS = new Set(['the', 'and', 'for', 'with', 'what', 'how', 'this', 'that', 'from', 'are', 'was', 'were', 'you', 'your', 'can', 'could', 'please', 'into', 'about', 'its', 'has', 'have', 'will', 'would', 'should', 'there', 'their', 'them', 'they', 'then', 'than', 'when', 'which', 'who', 'why', 'does', 'did', 'not', 'but', 'all', 'any', 'some', 'get', 'give', 'tell', 'now', 'our', 'out', 'use', 'tool', 'tools'])

function words(text: string): string[] {
  return text.slice(0, MAX_TEXT).toLowerCase().split(/[^a-z0-9]+/).filter(word => word.length >= 3 && !STOP_WORDS.has(word))
}

/** Ranks `tools` by how well they match `text`, best first; ties keep their order. */
export function rankTools(tools: readonly OpenRouterToolDefinition[], text: string): Array<{ tool: OpenRouterToolDefinition, score: number }> {
  const wanted = new Set(words(text))
  return tools
    .map((tool, index) => {
      const nameWords = new Set(words(tool.function.name.replace(/[_-]/g, ' ')))
      const descriptionWords = new Set(words(tool.function.description))
      let score = 0
      for (const word of wanted) score += (nameWords.has(word) ? 3 : 0) + (descriptionWords.has(word) ? 1 : 0)
      return { tool, score, index }
    })
    .sort((a, b) => b.score - a.score || a.index - b.index)
    .map(({ tool, score }) => ({ tool, score }))
}

/**
 * The tools to offer: all of them when there are at most `maxOffered`; else the `found` ones, then
 * the most relevant to `context`, up to `maxOffered - 1`, and `find_tools`.
 */
export function selectOfferedTools(all: readonly OpenRouterToolDefinition[], options: { maxOffered: number, context: string, found: ReadonlySet<string> }): OpenRouterToolDefinition[] {
  if (all.length <= options.maxOffered) return [...all]
  const room = Math.max(0, options.maxOffered - 1)
  const found = all.filter(tool => options.found.has(tool.function.name)).slice(0, room)
  const rest = rankTools(all.filter(tool => !options.found.has(tool.function.name)), options.context)
    .slice(0, room - found.length)
    .map(({ tool }) => tool)
  return [...found, ...rest, findToolsDefinition]
}

/** Answers a `find_tools` call: the matching tools (added to `found`) as the model reads them. */
export function answerFindTools(all: readonly OpenRouterToolDefinition[], argumentsJson: string, found: Set<string>): string {
  let query = ''
  try {
    const parsed = JSON.parse(argumentsJson || '{}') as { query?: unknown }
    query = typeof parsed.query === 'string' ? parsed.query : ''
  } catch {
    throw new Error('arguments must be JSON such as {"query": "convert currency"}')
  }
  if (!query.trim()) throw new Error('give a "query" saying what the tool should do')
  const matches = rankTools(all, query).filter(({ score }) => score > 0).slice(0, MAX_FOUND)
  for (const { tool } of matches) found.add(tool.function.name)
  if (matches.length === 0) return JSON.stringify({ found: [], note: 'No tool matches; try other words.' })
  return JSON.stringify({
    found: matches.map(({ tool }) => ({ name: tool.function.name, description: tool.function.description })),
    note: 'These tools can be called from your next step.',
  })
}
