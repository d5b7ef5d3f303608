import type { ChatCompletionRequest, ChatMessage } from '../../openrouter/types'

/**
 * The offline demo model's "mind": a small rule-based planner that reads the conversation the
 * way a model would and decides what to say or which tools to call. No network, no weights.
 */

export const DEMO_MODEL_ID = 'or3/offline-demo'

/** Characters of a message the demo model reads (its rules look for a short question). */
export const MAX_DEMO_INPUT_CHARS = 2_000
export const DEMO_MODEL_NAME = 'Offline demo model'

export type DemoPlan =
  | { kind: 'text', text: string }
  | { kind: 'tool-calls', calls: Array<{ name: string, arguments: Record<string, unknown> }> }

/** City (lower case) → IANA zone, for "what time is it in Tokyo?". */
const CITY_TIME_ZONES: Record<string, string> = {
  'tokyo': 'Asia/Tokyo', 'osaka': 'Asia/Tokyo', 'seoul': 'Asia/Seoul', 'beijing': 'Asia/Shanghai', 'shanghai': 'Asia/Shanghai',
  'hong kong': 'Asia/Hong_Kong', 'singapore': 'Asia/Singapore', 'bangkok': 'Asia/Bangkok', 'jakarta': 'Asia/Jakarta',
  'delhi': 'Asia/Kolkata', 'new delhi': 'Asia/Kolkata', 'mumbai': 'Asia/Kolkata', 'bangalore': 'Asia/Kolkata', 'dubai': 'Asia/Dubai',
  'tehran': 'Asia/Tehran', 'istanbul': 'Europe/Istanbul', 'moscow': 'Europe/Moscow', 'cairo': 'Africa/Cairo',
  'nairobi': 'Africa/Nairobi', 'lagos': 'Africa/Lagos', 'johannesburg': 'Africa/Johannesburg', 'athens': 'Europe/Athens',
  'berlin': 'Europe/Berlin', 'paris': 'Europe/Paris', 'rome': 'Europe/Rome', 'madrid': 'Europe/Madrid', 'amsterdam': 'Europe/Amsterdam',
  'stockholm': 'Europe/Stockholm', 'oslo': 'Europe/Oslo', 'warsaw': 'Europe/Warsaw', 'london': 'Europe/London', 'dublin': 'Europe/Dublin',
  'lisbon': 'Europe/Lisbon', 'reykjavik': 'Atlantic/Reykjavik', 'sao paulo': 'America/Sao_Paulo', 'buenos aires': 'America/Argentina/Buenos_Aires',
  'new york': 'America/New_York', 'toronto': 'America/Toronto', 'boston': 'America/New_York', 'chicago': 'America/Chicago',
  'mexico city': 'America/Mexico_City', 'denver': 'America/Denver', 'los angeles': 'America/Los_Angeles', 'san francisco': 'America/Los_Angeles',
  'seattle': 'America/Los_Angeles', 'vancouver': 'America/Vancouver', 'honolulu': 'Pacific/Honolulu', 'anchorage': 'America/Anchorage',
  'sydney': 'Australia/Sydney', 'melbourne': 'Australia/Melbourne', 'perth': 'Australia/Perth', 'auckland': 'Pacific/Auckland',
  'utc': 'UTC', 'gmt': 'UTC',
}

const LONG_ANSWER = [
  'Here is a longer answer, streamed the way a real model streams it: a few words at a time.',
  'Background jobs are the heart of this app. When you send a message, the server starts a job that talks to the model, runs any tools the model asks for, and feeds their results back until the answer is complete. The browser only watches.',
  'That is why you can close this tab in the middle of an answer. The job keeps going on the server, its progress is written to the job store, and when you come back, the page reattaches to the same job and continues from exactly where it is.',
  'Several tabs can watch the same job at once. Each one receives the same text, batched into small deltas so that a fast model does not flood the connection, and each delta carries an id, so a tab that loses its connection resumes without a gap and without repeating a word.',
  'Tools run on the server too. Each one has a schema for its arguments, a time limit and a size limit for its result, and a failing tool never ends the job: its error is handed back to the model, which can try again or explain what went wrong.',
  'Workflows build on the same pieces: a pipeline of model and tool steps that runs as one background job, with the state of every step saved as it changes, so that a run survives even a restart of the server.',
  'This demo model is a small set of rules, not a language model. Ask it for the time somewhere, for some arithmetic, or for the weather, and watch it call the matching tool and answer with the result. Connect an OpenRouter key in the settings for real models.',
].join('\n\n')

function messageText(message: ChatMessage | undefined): string {
  if (!message || message.content === null) return ''
  if (typeof message.content === 'string') return message.content
  return message.content.map(part => (typeof part.text === 'string' ? part.text : '')).join(' ')
}

function titleCase(text: string): string {
  return text.replace(/\b\p{L}/gu, letter => letter.toUpperCase())
}

/** "… in Tokyo?" → "Tokyo"; stops at punctuation and at "and". */
function placeAfterIn(text: string): string | null {
  const match = /\b(?:in|for|at)\s+([\p{L}][\p{L} .'/_-]*?)\s*(?:[?.!,;]|\band\b|$)/iu.exec(text)
  return match ? match[1]!.trim() : null
}

function timeZoneFor(place: string | null): string {
  if (!place) return 'UTC'
  if (/^[A-Za-z]+\/[A-Za-z_/]+$/.test(place)) return place // already an IANA name
  return CITY_TIME_ZONES[place.toLowerCase()] ?? titleCase(place).replace(/ /g, '_')
}

/** An arithmetic expression in the text, if there is one worth calculating. */
function expressionIn(text: string): string | null {
  const asked = /(?:calculate|compute|evaluate|what(?:'s| is)|how much is)\s+(.+?)\s*[?.!]*$/i.exec(text)?.[1] ?? text
  const cleaned = asked.replace(/\bx\b/g, '*').replace(/\btimes\b/gi, '*').replace(/\bplus\b/gi, '+').replace(/\bminus\b/gi, '-').replace(/\bdivided by\b/gi, '/').trim()
  const looksLikeMath = /\d/.test(cleaned) && (/[-+*/^%!×÷]/.test(cleaned) || /\b(?:sqrt|log|ln|sin|cos|tan|abs|round)\s*\(/i.test(cleaned))
  return looksLikeMath && /^[\d\s.,+\-*/^%!()×÷a-z_]+$/i.test(cleaned) ? cleaned.replace(/,(?=\d{3}\b)/g, '') : null
}

/** Tool calls the user's message asks for, one per clause ("time in Tokyo and weather in Paris"). */
function toolCallsFor(text: string, offered: ReadonlySet<string>): Array<{ name: string, arguments: Record<string, unknown> }> {
  const calls: Array<{ name: string, arguments: Record<string, unknown> }> = []
  for (const clause of text.split(/\band\b|;/i)) {
    if (offered.has('get_current_time') && /\b(?:time|clock|date|day is it)\b/i.test(clause)) {
      calls.push({ name: 'get_current_time', arguments: { timezone: timeZoneFor(placeAfterIn(clause)) } })
    } else if (offered.has('get_current_weather') && /\b(?:weather|temperature|forecast|sunny|rain(?:ing)?|hot|cold)\b/i.test(clause)) {
      const place = placeAfterIn(clause)
      if (place) calls.push({ name: 'get_current_weather', arguments: { location: titleCase(place) } })
    } else if (offered.has('calculate')) {
      const expression = expressionIn(clause)
      if (expression) calls.push({ name: 'calculate', arguments: { expression } })
    }
  }
  // "what is 2 + 3 and 4 * 5" split into clauses; the whole text is one expression otherwise.
  if (calls.length === 0 && offered.has('calculate')) {
    const expression = expressionIn(text)
    if (expression) calls.push({ name: 'calculate', arguments: { expression } })
  }
  return calls
}

function describeResult(name: string, args: Record<string, unknown>, content: string): string {
  if (content.startsWith('Error executing tool')) {
    return `I could not get that from \`${name}\`: ${content.replace(/^Error executing tool "[^"]+": /, '')}`
  }
  let data: Record<string, unknown>
  try {
    data = JSON.parse(content) as Record<string, unknown>
  } catch {
    return `\`${name}\` says: ${content}`
  }
  switch (name) {
    case 'get_current_time':
      return `In **${String(data.timezone)}** it is **${String(data.local)}** (UTC${String(data.utcOffset)}).`
    case 'calculate':
      return `\`${String(data.expression)}\` = **${String(data.result)}**`
    case 'get_current_weather': {
      const unit = data.unit === 'celsius' ? '°C' : '°F'
      return `It is **sunny** in ${String(data.location)}: **${String(data.temperature)} ${unit}**, humidity ${String(data.humidityPercent)}%. (Demo data: this tool always reports sunshine.)`
    }
    default:
      return `\`${name}\`(${JSON.stringify(args)}) returned: ${content}`
  }
}

/** Answers from the tool results at the end of the conversation. */
function answerFromToolResults(messages: ChatMessage[]): string {
  const results: Array<Extract<ChatMessage, { role: 'tool' }>> = []
  let index = messages.length - 1
  while (index >= 0 && messages[index]!.role === 'tool') results.unshift(messages[index--] as Extract<ChatMessage, { role: 'tool' }>)
  const assistant = messages[index]
  const calls = assistant?.role === 'assistant' ? assistant.tool_calls ?? [] : []
  const lines = results.map((result) => {
    const call = calls.find(candidate => candidate.id === result.tool_call_id)
    let args: Record<string, unknown> = {}
    try {
      args = JSON.parse(call?.function.arguments || '{}') as Record<string, unknown>
    } catch {
      // shown as empty arguments
    }
    return describeResult(call?.function.name ?? 'tool', args, result.content)
  })
  const used = [...new Set(calls.map(call => `\`${call.function.name}\``))].join(', ')
  return `${lines.join('\n\n')}\n\n_Answered by the offline demo model with ${used}._`
}

function introduction(offered: ReadonlySet<string>): string {
  const ideas = [
    offered.has('get_current_time') && '"What time is it in Tokyo?"',
    offered.has('calculate') && '"What is sqrt(2) * (3 + 4)^2?"',
    offered.has('get_current_weather') && '"What\'s the weather in Paris?"',
    '"Write a long answer about background jobs"',
  ].filter(Boolean)
  return 'Hi! I am the **offline demo model**: a few rules instead of a language model, so this app works with no API key and no network. '
    + `I call the server's tools when a question needs them. Try:\n\n${ideas.map(idea => `- ${idea}`).join('\n')}\n\n`
    + 'For real answers, add an OpenRouter key in the settings (or set `NUXT_OPENROUTER_API_KEY`).'
}

/** Decides the demo model's next turn for a chat-completions request. */
export function planDemoReply(request: Pick<ChatCompletionRequest, 'messages' | 'tools' | 'tool_choice'>): DemoPlan {
  const messages = request.messages ?? []
  if (messages.at(-1)?.role === 'tool') return { kind: 'text', text: answerFromToolResults(messages) }

  const lastUser = [...messages].reverse().find(message => message.role === 'user')
  // Rules read the start of the message only: bounded work however long the message is.
  const text = messageText(lastUser).slice(0, MAX_DEMO_INPUT_CHARS).trim()
  const offered = new Set(request.tool_choice === 'none' ? [] : (request.tools ?? []).map(tool => tool.function.name))

  if (/\b(?:long|essay|story|explain in detail)\b/i.test(text)) return { kind: 'text', text: LONG_ANSWER }
  const calls = toolCallsFor(text, offered)
  if (calls.length > 0) return { kind: 'tool-calls', calls }
  if (/\bweather\b/i.test(text) && offered.has('get_current_weather')) {
    return { kind: 'text', text: 'Which place would you like the weather for? For example: "What\'s the weather in Lisbon?"' }
  }
  if (text === '') return { kind: 'text', text: introduction(offered) }
  if (/^(?:hi|hello|hey|help|who are you|what can you do)\b/i.test(text)) return { kind: 'text', text: introduction(offered) }
  return {
    kind: 'text',
    text: `You said: "${text.length > 200 ? `${text.slice(0, 200)}…` : text}".\n\n${introduction(offered)}`,
  }
}
