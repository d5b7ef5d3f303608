import type { ChatCompletionRequest, ChatMessage } from '../../openrouter/types'
import { describeFiles, filesIn } from './demo-files'
import { isTextFilePart } from '../../attachments/attachments'
import { arithmeticFromWords, conversionIn, placeIn, temperatureUnitIn, unitKind, wordsToDigits } from './demo-language'
import { evaluateExpression } from '../../tools/builtin/expression-evaluator'
import { describeWorkbenchResult, workbenchCallFor } from './demo-workbench'
import { describeMemoryResult, memoryCallFor } from './demo-memory'
import { describeKnowledgeResult, knowledgeCallFor } from './demo-knowledge'
import { describeImageResult, imageCallFor } from './demo-images'
import { REVISED_MARK, stepAnswer, YES_OR_NO_QUESTION } from './demo-steps'

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

const LONG_ANSWER = [
  'Here is a longer answer, streamed the way a real model streams it: a few words at a time.',
  'Background jobs are the heart of this app. When you send a message, the server starts a job that talks to the model, runs any tools the model asks for, and feeds their results back until the answer is complete. The browser only watches.',
  'That is why you can close this tab in the middle of an answer. The job keeps going on the server, its progress is written to the job store, and when you come back, the page reattaches to the same job and continues from exactly where it is.',
  'Several tabs can watch the same job at once. Each one receives the same text, batched into small deltas so that a fast model does not flood the connection, and each delta carries an id, so a tab that loses its connection resumes without a gap and without repeating a word.',
  'Tools run on the server too. Each one has a schema for its arguments, a time limit and a size limit for its result, and a failing tool never ends the job: its error is handed back to the model, which can try again or explain what went wrong.',
  'Workflows build on the same pieces: a pipeline of model and tool steps that runs as one background job, with the state of every step saved as it changes, so that a run survives even a restart of the server.',
  'This demo model is a small set of rules, not a language model. Ask it for the time somewhere, for some arithmetic, or for the weather, and watch it call the matching tool and answer with the result. Connect an OpenRouter key in the settings for real models.',
].join('\n\n')

/** What a message says in words: its text, without the files the app put in as text. */
function messageText(message: ChatMessage | undefined): string {
  if (!message || message.content === null) return ''
  if (typeof message.content === 'string') return message.content
  return message.content.map(part => (typeof part.text === 'string' && !isTextFilePart(part.text) ? part.text : '')).join(' ')
}

/** A tool call the planner makes. */
type PlannedCall = { name: string, arguments: Record<string, unknown> }

/** What a clause asks for, judged by its words. */
type Intent = 'time' | 'weather' | 'convert' | 'calculate'

function intentOf(clause: string): Intent | undefined {
  // Conversions first: "60 miles per hour in km/h" is not a question about the time.
  if (conversionIn(clause)) return 'convert'
  if (/\b(?:time|clock|o'?clock|date|day is it|hour)\b|\bis it (?:morning|night|evening|afternoon|daytime|late|early)\b/i.test(clause)) return 'time'
  // The weather, as people ask it: misspelt, or by what they would wear or carry.
  if (/\b(?:weather|wether|weathr|weaher|wheather|waether|weater|temperature|forecast|sunny|rain(?:ing|y)?|snow(?:ing)?|hot|cold|warm|humid|degrees outside|umbrella|raincoat|jacket|coat|sunscreen)\b|\b(?:nice|good) (?:out|outside|day|weather)\b|\bgoing to be (?:nice|good|sunny|wet)\b/i.test(clause)) return 'weather'
  if (expressionIn(clause)) return 'calculate'
  return undefined
}

/** Words before a sum that are not part of it: "ok and 81 / 9", "so 8 * 8", "price after a 40% discount…". */
const LEADING_FILLER = /^(?:(?:and|so|ok|okay|then|now|also|well|just|please|take|the|price|after|a|an)\s+)+/i

/**
 * An arithmetic expression in the text (words read as numbers and operators), if there is one worth
 * calculating and the calculator takes it: a half-understood sum ("x + 2", "and 15% of that" with
 * nothing before it) is no expression, so it never becomes a failed tool call.
 */
function expressionIn(text: string, previous?: number): string | null {
  let said = text
  if (previous !== undefined) said = followUpArithmetic(said, previous) ?? said
  const asked = /(?:calculate|compute|evaluate|work out|what(?:'s| is| are)|how much is|whats)\s+(.+?)\s*[?.!=]*$/i.exec(said)?.[1] ?? said
  const cleaned = arithmeticFromWords(asked).replace(/[?.!=]+$/, '').trim().replace(LEADING_FILLER, '')
  const looksLikeMath = /\d/.test(cleaned) && (/[-+*/^%!×÷]/.test(cleaned) || /\b(?:sqrt|cbrt|log|ln|sin|cos|tan|abs|round)\s*\(/i.test(cleaned))
  if (!looksLikeMath || !/^[\d\s.+\-*/^%!()×÷a-z_]+$/i.test(cleaned) || /\b[a-z]{4,}\b(?!\s*\()/i.test(cleaned.replace(/\b(?:sqrt|cbrt|log|abs|round|sin|cos|tan|ln|pi)\b/gi, ''))) return null
  try {
    return Number.isFinite(evaluateExpression(cleaned)) ? cleaned : null
  } catch {
    return null
  }
}

/** "now divide that by 4", "double it", "add 5 to that", "that times 3": the previous result put in. */
function followUpArithmetic(text: string, previous: number): string | undefined {
  const value = String(previous)
  const said = wordsToDigits(text)
  const it = String.raw`(?:that|it|this|the result)`
  const verbs: Array<[RegExp, (operand: string) => string]> = [
    [new RegExp(String.raw`\bdivide\s+${it}\s+by\s+(-?[\d.]+)`, 'i'), operand => `${value} / ${operand}`],
    [new RegExp(String.raw`\bmultiply\s+${it}\s+by\s+(-?[\d.]+)`, 'i'), operand => `${value} * ${operand}`],
    [new RegExp(String.raw`\badd\s+(-?[\d.]+)\s+to\s+${it}`, 'i'), operand => `${value} + ${operand}`],
    [new RegExp(String.raw`\bsubtract\s+(-?[\d.]+)\s+from\s+${it}`, 'i'), operand => `${value} - ${operand}`],
    [new RegExp(String.raw`\bdouble\s+${it}`, 'i'), () => `${value} * 2`],
    [new RegExp(String.raw`\b(?:halve\s+|half\s+of\s+)${it}`, 'i'), () => `${value} / 2`],
    [new RegExp(String.raw`\bsquare\s+${it}`, 'i'), () => `${value}^2`],
    [new RegExp(String.raw`(-?[\d.]+)\s*(?:%|percent|per cent)\s+off\s+${it}`, 'i'), operand => `${value} - ${operand} / 100 * ${value}`],
  ]
  for (const [pattern, build] of verbs) {
    const match = pattern.exec(said)
    if (match) return `what is ${build(match[1] ?? '')}`
  }
  // "that times 3", "and divided by 4?": the words for the previous result, or an operator first.
  const replaced = said.replace(new RegExp(String.raw`\b${it}\b`, 'i'), value)
  if (replaced !== said) return replaced
  if (/^\s*(?:and\s+|now\s+|then\s+)?(?:times|multiplied by|divided by|plus|minus|over|\*|\/|\+|-)\s*-?\d/i.test(said)) return `what is ${value} ${said.replace(/^\s*(?:and|now|then)\s+/i, '')}`
  return undefined
}

/** The conversation so far, as the planner needs it: the last place, what was asked last, the last number answered. */
interface Context {
  place?: { name: string, zone?: string }
  intent?: Intent
  previousResult?: number
}

function contextOf(messages: ChatMessage[]): Context {
  const context: Context = {}
  const earlier = messages.slice(0, -1)
  for (const message of earlier.slice(-20)) {
    if (message.role === 'user') {
      const text = messageText(message).slice(0, MAX_DEMO_INPUT_CHARS)
      const intent = intentOf(text)
      if (intent) context.intent = intent
      const place = placeIn(temperatureUnitIn(text).rest)
      if (place && (intent === 'time' || intent === 'weather')) context.place = place
    } else if (message.role === 'assistant' && typeof message.content === 'string') {
      // A conversation sent again holds earlier answers as text ("`12 * 7` = **84**"), not their tool results.
      const answered = /=\s*\*\*(-?\d+(?:\.\d+)?)\*\*/.exec(message.content.slice(0, MAX_DEMO_INPUT_CHARS))
      if (answered) context.previousResult = Number(answered[1])
    } else if (message.role === 'tool') {
      try {
        const data = JSON.parse(message.content) as { result?: unknown }
        if (typeof data.result === 'number') context.previousResult = data.result
      } catch {
        // not a number
      }
    }
  }
  return context
}

/** Tool calls the user's message asks for, one per clause ("time in Tokyo and the weather there"). */
function toolCallsFor(text: string, offered: ReadonlySet<string>, context: Context): { calls: PlannedCall[], unknownPlace?: string, mixedUnits?: { from: string, to: string } } {
  const calls: PlannedCall[] = []
  let lastPlace = context.place
  let unknownPlace: string | undefined
  let mixedUnits: { from: string, to: string } | undefined
  // Numbers in words become digits first, so "one hundred and five" is not split at its "and".
  const clauses = wordsToDigits(text).split(/\band\b(?!\s*-?\d)|;|\balso\b/i).map(clause => clause.trim()).filter(Boolean)
  for (const clause of clauses) {
    // Tools the person's browser runs, when the app offered them: where they are, their own clock.
    if (offered.has('get_user_location') && /\b(?:where am i|where i am|my (?:current )?(?:location|position))\b/i.test(clause)) {
      calls.push({ name: 'get_user_location', arguments: { precision: 'city' } })
      continue
    }
    if (offered.has('get_browser_context') && /\b(?:my (?:time ?zone|local time)|(?:time|clock)(?: is it)? (?:here|where i am))\b/i.test(clause)) {
      calls.push({ name: 'get_browser_context', arguments: {} })
      continue
    }
    const { unit, rest } = temperatureUnitIn(clause)
    let intent = intentOf(clause)
    // "there", or the weather with no place named: the place the conversation was about.
    const place = placeIn(rest) ?? (/\bthere\b/i.test(clause) || intent === 'weather' ? lastPlace : undefined)
    // A follow-up that only names a place ("and in Madrid?", "what about London") asks what was asked last.
    if (!intent && place && (context.intent === 'time' || context.intent === 'weather') && /^(?:and\s+)?(?:what about|how about|and|in|for|at|what of)?\b/i.test(clause) && clause.split(/\s+/).length <= 6) intent = context.intent
    if (intent === 'time' && offered.has('get_current_time')) {
      if (place && !place.zone) {
        unknownPlace = place.name
        continue
      }
      calls.push({ name: 'get_current_time', arguments: { timezone: place?.zone ?? 'UTC' } })
      if (place) lastPlace = place
    } else if (intent === 'weather' && offered.has('get_current_weather')) {
      if (!place) continue
      calls.push({ name: 'get_current_weather', arguments: { location: place.name, ...(unit ? { unit } : {}) } })
      lastPlace = place
    } else if (intent === 'convert' && offered.has('convert_units')) {
      const conversion = conversionIn(clause)!
      // Millilitres to ounces (of weight) is no conversion: say so rather than call a tool that fails.
      if (unitKind(conversion.from) !== unitKind(conversion.to)) mixedUnits = { from: conversion.from, to: conversion.to }
      else calls.push({ name: 'convert_units', arguments: conversion })
    } else if (offered.has('calculate')) {
      const expression = expressionIn(clause, context.previousResult)
      if (expression) calls.push({ name: 'calculate', arguments: { expression } })
    }
  }
  // "what is 2 + 3 and 4 * 5" was split into clauses; otherwise the whole text may be one expression.
  if (calls.length === 0 && offered.has('calculate')) {
    const expression = expressionIn(text, context.previousResult)
    if (expression) calls.push({ name: 'calculate', arguments: { expression } })
  }
  return { calls, unknownPlace, mixedUnits }
}

/**
 * A number as a person reads it: a conversion to 4 decimals at most ("6.2137", not
 * "6.21371192237"), a calculation without floating-point noise ("0.3", not "0.30000000000000004").
 * Tiny values keep three significant digits instead of rounding to 0.
 */
export function readableNumber(value: unknown, decimals: number): string {
  if (typeof value !== 'number' || !Number.isFinite(value)) return String(value)
  if (value !== 0 && Math.abs(value) < 10 ** -decimals) return value.toPrecision(3)
  return String(Number(Number(value.toPrecision(12)).toFixed(decimals)))
}

function describeResult(name: string, args: Record<string, unknown>, content: string): string {
  if (content.startsWith('Error executing tool')) {
    return `I could not get that from \`${name}\`: ${content.replace(/^Error executing tool "[^"]+": /, '')}`
  }
  // A subagent's answer is its text.
  if (name === 'task') return `The subagent answered:\n\n${content}`
  let data: Record<string, unknown>
  try {
    data = JSON.parse(content) as Record<string, unknown>
  } catch {
    return `\`${name}\` says: ${content}`
  }
  const workbench = describeWorkbenchResult(name, data) ?? describeMemoryResult(name, data) ?? describeKnowledgeResult(name, data) ?? describeImageResult(name, data)
  if (workbench !== undefined) return workbench
  switch (name) {
    case 'get_current_time':
      return `In **${String(data.timezone)}** it is **${String(data.local)}** (UTC${String(data.utcOffset)}).`
    case 'calculate':
      return `\`${String(data.expression)}\` = **${readableNumber(data.result, 10)}**`
    case 'convert_units':
      return `${String(data.value)} ${String(data.from)} = **${readableNumber(data.result, 4)} ${String(data.to)}**`
    case 'get_current_weather': {
      const unit = data.unit === 'celsius' ? '°C' : '°F'
      return `It is **sunny** in ${String(data.location)}: **${String(data.temperature)} ${unit}**, humidity ${String(data.humidityPercent)}%. (Demo data: this tool always reports sunshine.)`
    }
    case 'get_user_location':
      return `Your browser says you are near **${String(data.latitude)}, ${String(data.longitude)}** (within about ${String(data.accuracyMeters ?? '?')} m).`
    case 'get_browser_context':
      return `Your browser says: time zone **${String(data.timeZone)}**, local time **${String(data.localTime)}**.`
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

/** Topics of this app's own long answer: asking for a long text about them gets it without a word of apology. */
const APP_TOPICS = /\b(?:background|jobs?|tabs?|this app|the app|stream\w*|scroll\w*|focus|keyboards?|settings|pages?|answers?|tools?|workflows?)\b/i

/**
 * A request for writing (a story, a poem, an essay, a long answer). The demo has one long text, about
 * this app, which it streams for a long answer about anything of the app's; for a story or poem on
 * another subject it says plainly that it cannot write one, and offers the long text only when a long
 * piece was asked for (so the streaming can still be seen). Undefined when no writing was asked for.
 */
function writingAsked(text: string, offered: ReadonlySet<string>): string | undefined {
  const long = /\b(?:long|essay|story|explain in detail)\b/i.test(text)
  const piece = /\b(story|poem|song|essay|tale|limerick|haiku|joke)\b/i.exec(text)?.[1]?.toLowerCase()
  if (!long && !piece) return undefined
  const topic = /\babout\s+([^.?!\n]{1,60})/i.exec(text)?.[1]?.trim()
  if (!piece || (topic && APP_TOPICS.test(topic))) return LONG_ANSWER
  const cannot = `I cannot write a ${piece}${topic ? ` about ${topic}` : ''}: I am a few rules, not a language model (add an OpenRouter key in the settings for one that can).`
  if (long) return `${cannot} What I can do is stream a long answer, so here is mine, about how this app works.\n\n${LONG_ANSWER}`
  const idea = ideas(offered)[0]
  return idea ? `${cannot} I can tell the time, do arithmetic, convert units and report (demo) weather; try ${idea}.` : cannot
}

/** What to try, from the tools offered. */
function ideas(offered: ReadonlySet<string>): string[] {
  return [
    offered.has('get_current_time') && '"What time is it in Tokyo?"',
    offered.has('calculate') && '"What is 15% of 240?"',
    offered.has('convert_units') && '"Convert 10 km to miles"',
    offered.has('get_current_weather') && '"Weather in Berlin in celsius"',
  ].filter((idea): idea is string => Boolean(idea))
}

/** What to try of the workbench, from the tools offered. */
function workbenchIdeas(offered: ReadonlySet<string>): string[] {
  return [
    offered.has('run_code') && '"Run `[1, 2, 3].map(n => n * n)`"',
    offered.has('write') && '"Save \"buy milk\" as todo.md", then "What files do I have?"',
    offered.has('web_fetch') && '"Fetch https://example.org"',
    offered.has('generate_image') && '"Draw a sunset over the sea"',
  ].filter((idea): idea is string => Boolean(idea))
}

function introduction(offered: ReadonlySet<string>): string {
  return 'Hi! I am the **offline demo model**: a few rules instead of a language model, so this app works with no API key and no network. '
    + `I call the server's tools when a question needs them. Try:\n\n${[...ideas(offered), ...workbenchIdeas(offered), '"Write a long answer about background jobs"'].map(idea => `- ${idea}`).join('\n')}\n\n`
    + 'For real answers, add an OpenRouter key in the settings (or set `NUXT_OPENROUTER_API_KEY`).'
}

/** A short answer for what the rules do not cover, varied by the message so it does not repeat itself. */
function fallback(text: string, offered: ReadonlySet<string>): string {
  const suggestions = ideas(offered)
  let hash = 0
  for (let index = 0; index < Math.min(text.length, 200); index++) hash = (hash * 31 + text.charCodeAt(index)) >>> 0
  const idea = suggestions.length > 0 ? suggestions[hash % suggestions.length] : undefined
  const openers = [
    'That is beyond my few rules.',
    'I can only follow a handful of rules, and that is not one of them.',
    'I did not catch that: I am a small rule-based demo, not a language model.',
    'Sorry, that one is outside what this offline demo understands.',
  ]
  const opener = openers[hash % openers.length]!
  return idea ? `${opener} I can tell the time, do arithmetic, convert units and report (demo) weather; try ${idea}.` : `${opener} Add an OpenRouter key in the settings for a real model.`
}

const TITLE_STOP_WORDS = new Set(['a', 'an', 'the', 'is', 'are', 'was', 'be', 'it', 'its', 'of', 'to', 'in', 'on', 'for', 'and', 'or', 'but', 'with', 'what', 'whats', 'how', 'why', 'who', 'when', 'where', 'which', 'can', 'could', 'would', 'should', 'do', 'does', 'did', 'i', 'me', 'my', 'you', 'your', 'we', 'please', 'tell', 'about', 'give', 'show', 'write', 'some', 'this', 'that', 'there', 'right', 'now', 'hi', 'hello', 'hey', 'question', 'answer'])

/** A title as the demo model writes one: from what the question asks (its tool's topic and place), else its main words. */
export function demoTitle(text: string): string {
  const read = text.slice(0, MAX_DEMO_INPUT_CHARS)
  const question = (/question:[ \t]*([^\n]*)/i.exec(read)?.[1] ?? read).trim()
  const attached = /^\(Attached: ([^)\n]{1,300})\)/m.exec(read)?.[1]
  const intent = intentOf(question)
  const place = intent === 'time' || intent === 'weather' ? placeIn(temperatureUnitIn(question).rest) : undefined
  if (intent === 'time') return place ? `Time in ${place.name}` : 'The time now'
  if (intent === 'weather') return place ? `Weather in ${place.name}` : 'The weather'
  if (intent === 'convert') {
    const { value, from, to } = conversionIn(question)!
    return `${value} ${from} to ${to}`
  }
  if (intent === 'calculate') return `Calculating ${expressionIn(question)!.slice(0, 40)}`
  const words = question.split(/[^\p{L}\p{N}'-]+/u).filter(word => word.length > 1 && !TITLE_STOP_WORDS.has(word.toLowerCase())).slice(0, 5)
  // A question about files ("what did I send?") is named by the files.
  if (attached && words.length < 3) return attached.length > 50 ? `${attached.slice(0, 49)}…` : attached
  if (words.length === 0) return 'A short chat'
  const title = words.join(' ')
  return title[0]!.toUpperCase() + title.slice(1)
}

/** Decides the demo model's next turn for a chat-completions request. */
export function planDemoReply(request: Pick<ChatCompletionRequest, 'messages' | 'tools' | 'tool_choice'>): DemoPlan {
  const messages = request.messages ?? []
  if (messages.at(-1)?.role === 'tool') return { kind: 'text', text: answerFromToolResults(messages) }
  // Asked for a conversation's title (the app does this after a first answer): a few words from the question.
  const instructions = messages[0]?.role === 'system' ? messageText(messages[0]).slice(0, MAX_DEMO_INPUT_CHARS) : ''
  if (/\btitle\b/i.test(instructions) && /\bconversation\b/i.test(instructions)) return { kind: 'text', text: demoTitle(messageText(messages.at(-1))) }

  const lastUser = [...messages].reverse().find(message => message.role === 'user')
  // Files sent with the question: the demo model says what it received.
  const files = Array.isArray(lastUser?.content) ? filesIn(lastUser.content) : []
  if (files.length > 0) return { kind: 'text', text: describeFiles(files) }
  // Rules read the start of the message only: bounded work however long the message is.
  const text = messageText(lastUser).slice(0, MAX_DEMO_INPUT_CHARS).trim()
  const offered = new Set(request.tool_choice === 'none' ? [] : (request.tools ?? []).map(tool => tool.function.name))

  // A yes-or-no question about a text (a loop's condition): the demo judges a text ready once it was revised after a critique.
  if (messageText(lastUser).trimEnd().endsWith(YES_OR_NO_QUESTION)) return { kind: 'text', text: text.includes(REVISED_MARK) ? 'Yes.' : 'No.' }
  const echo = /^(?:please\s+)?(?:say|repeat|echo)(?:\s+after\s+me)?\s*:?\s+/i.exec(text)
  if (echo) return { kind: 'text', text: text.slice(echo[0].length) }
  const lastUserAt = messages.lastIndexOf(lastUser!)
  const previousAnswer = messages.slice(0, lastUserAt).reverse().find(message => message.role === 'assistant' && typeof message.content === 'string' && message.content.trim() !== '')
  const afterPicture = Boolean(previousAnswer && /^Here (?:is your picture|it is, changed)/.test(messageText(previousAnswer)))
  const workbench = memoryCallFor(text, offered) ?? workbenchCallFor(text, offered, previousAnswer ? messageText(previousAnswer) : undefined) ?? imageCallFor(text, offered, afterPicture)
  if (workbench) return { kind: 'tool-calls', calls: [workbench] }
  const writing = writingAsked(text, offered)
  if (writing) return { kind: 'text', text: writing }
  // With knowledge bases attached, a question that is not for a built-in tool is for the documents.
  const search = intentOf(text) ? undefined : knowledgeCallFor(text, offered)
  if (search) return { kind: 'tool-calls', calls: [search] }
  const { calls, unknownPlace, mixedUnits } = toolCallsFor(text, offered, contextOf(messages.slice(0, messages.lastIndexOf(lastUser!) + 1)))
  if (calls.length > 0) return { kind: 'tool-calls', calls }
  if (unknownPlace) {
    return { kind: 'text', text: `I do not know which time zone "${unknownPlace}" is in. Try a large city near it (Tokyo, New York, Berlin…) or a zone name such as Europe/Vienna.` }
  }
  if (mixedUnits) {
    return { kind: 'text', text: `I can only convert between units of the same kind: ${mixedUnits.from} measures ${unitKind(mixedUnits.from) ?? 'one thing'} and ${mixedUnits.to} ${unitKind(mixedUnits.to) ?? 'another'}. Try "Convert 500 ml to gallons" or "16 oz in grams".` }
  }
  if (intentOf(text) === 'weather' && offered.has('get_current_weather')) {
    return { kind: 'text', text: 'Which place would you like the weather for? For example: "What\'s the weather in Lisbon?"' }
  }
  const step = stepAnswer(instructions, text)
  if (step) return { kind: 'text', text: step }
  if (text === '' || /^(?:hi|hello|hey|hiya|yo|good (?:morning|afternoon|evening)|help|who are you|what can you do|what are you)\b/i.test(text)) return { kind: 'text', text: introduction(offered) }
  return { kind: 'text', text: fallback(text, offered) }
}
