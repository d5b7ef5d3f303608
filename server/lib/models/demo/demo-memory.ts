/**
 * The offline demo model's memory: "remember that my dog is called Rex" keeps a memory (in the
 * third person, as a model would write it), "what do you remember about my dog?" or "what's my
 * dog called?" recalls, "forget that my dog is called Rex" forgets; only when the memory tools are
 * offered (the person turned memory on). Every rule reads a message already cut to the demo's
 * 2,000 characters, with patterns of one quantifier each.
 */

/** A tool call the planner makes. */
export interface MemoryCall {
  name: 'remember' | 'recall' | 'forget'
  arguments: Record<string, unknown>
}

const FIRST_TO_THIRD: Array<[RegExp, string]> = [
  [/\bI am\b|\bI'm\b/gi, 'they are'],
  [/\bI was\b/gi, 'they were'],
  [/\bI\b/g, 'they'],
  [/\bmy\b/gi, 'their'],
  [/\bme\b/gi, 'them'],
  [/\bmine\b/gi, 'theirs'],
]

/** What a person said of themselves, as said of them ("my dog" → "Their dog"). */
export function aboutThem(text: string): string {
  let said = text.trim().replace(/[.!]+$/, '')
  for (const [pattern, replacement] of FIRST_TO_THIRD) said = said.replace(pattern, replacement)
  return said.charAt(0).toUpperCase() + said.slice(1)
}

/** Words of a question worth searching memories for. */
function queryOf(text: string): string {
  return text.replace(/[?.!]+$/, '').replace(/\b(?:called|named|is|are|was|the|a|an|me|my|about|what|do|you)\b/gi, ' ').replace(/\s+/g, ' ').trim()
}

/** The memory call `text` asks for among the tools `offered`, if any. */
export function memoryCallFor(text: string, offered: ReadonlySet<string>): MemoryCall | undefined {
  const remember = /^(?:please\s+)?(?:remember|note|keep in mind)(?:\s+that)?[:,]?\s+(.{1,480})/i.exec(text)?.[1]
  if (remember && offered.has('remember')) return { name: 'remember', arguments: { text: aboutThem(remember) } }
  const forget = /^(?:please\s+)?forget(?:\s+that|\s+about)?[:,]?\s+(.{1,480})/i.exec(text)?.[1]
  if (forget && offered.has('forget')) return { name: 'forget', arguments: { matching: aboutThem(forget) } }
  if (!offered.has('recall')) return undefined
  const everything = /^what do you (?:remember|know)(?: about me)?\s*\??$/i.test(text)
  if (everything) return { name: 'recall', arguments: {} }
  const asked = /^(?:what do you (?:remember|know) about|do you remember|what(?:'s| is| was) my)\s+(.{1,200})/i.exec(text)?.[1]
  if (asked) return { name: 'recall', arguments: { query: queryOf(asked) || asked } }
  return undefined
}

/** A short answer from a memory tool's result, or undefined for another tool. */
export function describeMemoryResult(name: string, data: Record<string, any>): string | undefined {
  switch (name) {
    case 'remember':
      return data.alreadyKnown
        ? `I already remember that: "${data.remembered}".`
        : `I will remember that: "${data.remembered}". You can read, change or delete what I remember in Settings → Memory.`
    case 'recall': {
      const memories = Array.isArray(data.memories) ? data.memories : []
      if (memories.length === 0) return data.query ? `I do not remember anything about "${data.query}".` : 'I do not remember anything about you yet. Say "remember that …" and I will.'
      return `Here is what I remember:\n\n${memories.map((memory: any) => `- ${memory.text}`).join('\n')}`
    }
    case 'forget': {
      const forgotten = Array.isArray(data.forgotten) ? data.forgotten : []
      return forgotten.length === 0 ? 'I did not remember anything like that.' : `Forgotten:\n\n${forgotten.map((text: string) => `- ~~${text}~~`).join('\n')}`
    }
    default:
      return undefined
  }
}
