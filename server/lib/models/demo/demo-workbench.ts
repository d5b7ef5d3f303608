/**
 * The offline demo model on the workbench: a few requests said plainly become the matching tool
 * call ("fetch https://…", "search the web for …", "save this as notes.md", "what files do I
 * have", "read notes.md", "grep my files for …", "run this code: ```js …```"), and the tools'
 * results become a short answer, so the workbench shows without an API key. Every rule reads a
 * message already cut to the demo's 2,000 characters, with patterns of one quantifier each.
 */

/** A tool call the planner makes. */
export interface WorkbenchCall {
  name: string
  arguments: Record<string, unknown>
}

/** The one tool the demo model can write: a word counter, for showing how a person approves what an agent wrote. */
const WORD_COUNT_TOOL = {
  name: 'word_count',
  description: 'Counts the words, characters and lines of a text.',
  parameters: { type: 'object', properties: { text: { type: 'string', description: 'The text to count.' } }, required: ['text'] },
  code: 'const words = args.text.trim().split(/\\s+/).filter(Boolean);\n({ words: words.length, characters: args.text.length, lines: args.text.split("\\n").length })',
}

const FILE_NAME = String.raw`([\w][\w.\/-]{0,200}\.[A-Za-z0-9]{1,8})`

/** The call `text` asks for among the tools `offered`, if any. `previousAnswer` is what "this" means in "save this". */
export function workbenchCallFor(text: string, offered: ReadonlySet<string>, previousAnswer: string | undefined): WorkbenchCall | undefined {
  if (offered.has('propose_tool') && /\b(?:write|make|create|build) (?:me )?a tool (?:that|to|which) counts? words\b/i.test(text)) return { name: 'propose_tool', arguments: WORD_COUNT_TOOL }
  const counted = /\bcount (?:the )?words (?:in|of)\s*:?\s*(.{1,1500})/i.exec(text)?.[1]
  if (counted && offered.has('run_my_tool')) return { name: 'run_my_tool', arguments: { name: 'word_count', args: { text: counted.replace(/^["“]|["”]$/g, '') } } }
  const delegated = /\b(?:ask|have|get|let) a subagent (?:to\s+)?(.{1,1500})/i.exec(text)?.[1]?.trim()
  if (delegated && offered.has('task')) return { name: 'task', arguments: { description: delegated.slice(0, 80), prompt: delegated } }
  const url = /\b(?:fetch|read|open|summari[sz]e|get|look at)\s+(?:the page\s+)?(https?:\/\/[^\s<>"']{1,2000})/i.exec(text)?.[1]
  if (url && offered.has('web_fetch')) return { name: 'web_fetch', arguments: { url: url.replace(/[.,;:!?)]+$/, '') } }
  const query = /\bsearch (?:the web|online|the internet) for\s+(.{1,300})/i.exec(text)?.[1]
  if (query && offered.has('web_search')) return { name: 'web_search', arguments: { query: query.replace(/[?.!]+$/, '').trim(), count: 5 } }
  const fenced = /\brun (?:this |the following )?(?:code|javascript|js|python|program)?\s*:?\s*```(js|javascript|python|py)?\s*\n?([^`]{1,1800})```/i.exec(text)
  const code = fenced?.[2] ?? /\brun\s+`([^`]{1,1800})`/i.exec(text)?.[1]
  const python = /^py/i.test(fenced?.[1] ?? '') || /\brun (?:this |the following )?python\b/i.test(text)
  if (code && offered.has('run_code')) return { name: 'run_code', arguments: { language: python ? 'python' : 'javascript', code: code.trim() } }
  if (offered.has('write')) {
    const quoted = new RegExp(String.raw`\b(?:save|write)\s+["“]([^"”]{1,1500})["”]\s+(?:as|to|in(?:to)?)\s+${FILE_NAME}`, 'i').exec(text)
    if (quoted) return { name: 'write', arguments: { path: quoted[2], content: quoted[1] } }
    const colon = new RegExp(String.raw`\b(?:save|write)\s+(?:as|to|in(?:to)?|a file(?: called)?)\s+${FILE_NAME}\s*:\s*([\s\S]{1,1800})`, 'i').exec(text)
    if (colon) return { name: 'write', arguments: { path: colon[1], content: colon[2]!.trim() } }
    const saveThis = new RegExp(String.raw`\b(?:save|write|put)\s+(?:this|that|it|the answer|your answer)\s+(?:as|to|in(?:to)?)\s+${FILE_NAME}`, 'i').exec(text)
    if (saveThis && previousAnswer) return { name: 'write', arguments: { path: saveThis[1], content: previousAnswer } }
  }
  const pattern = /\b(?:grep|search|find)\s+(?:in\s+)?(?:my files|the files|the workspace|files)\s+for\s+["'“]?([^"'”\n]{1,200})/i.exec(text)?.[1]
  if (pattern && offered.has('grep')) return { name: 'grep', arguments: { pattern: pattern.replace(/[?.!]+$/, '').trim(), literal: true, ignore_case: true } }
  if (offered.has('ls') && /\b(?:what|which) files\b|\b(?:list|show)(?: me)? (?:my |the |all )?(?:workspace )?files\b|\bwhat(?:'s| is) in (?:my|the) workspace\b/i.test(text)) return { name: 'ls', arguments: {} }
  const read = new RegExp(String.raw`\b(?:read|show|open|cat|print)\s+(?:me\s+)?(?:the file\s+)?${FILE_NAME}`, 'i').exec(text)?.[1]
  if (read && offered.has('read')) return { name: 'read', arguments: { path: read } }
  return undefined
}

const fence = (text: string) => `\`\`\`\n${text.replaceAll('```', '`\u200b``')}\n\`\`\``

/** A short answer from a workbench tool's result, or undefined for another tool. */
export function describeWorkbenchResult(name: string, data: Record<string, any>): string | undefined {
  switch (name) {
    case 'propose_tool':
      return data.approved ? `I wrote the tool **${data.name}** and you approved it. Try "count the words in: the quick brown fox".` : `I wrote the tool **${data.name}**, but it is not approved, so it cannot run. You can approve it in Settings → Your tools.`
    case 'run_my_tool':
      return `Your tool says: \`${JSON.stringify(data.result ?? data)}\``
    case 'web_fetch': {
      const content = String(data.content ?? '')
      return `**${data.title ?? data.url}** (${data.url})\n\n${content.slice(0, 700)}${content.length > 700 ? '…' : ''}`
    }
    case 'web_search': {
      const results = Array.isArray(data.results) ? data.results : []
      if (results.length === 0) return `I searched for "${data.query}" and found nothing.`
      return `Results for "${data.query}":\n\n${results.map((hit: any) => `- [${hit.title || hit.url}](${hit.url})${hit.snippet ? `: ${hit.snippet}` : ''}`).join('\n')}`
    }
    case 'write':
      return `Saved **${data.path}** (${Number(data.size).toLocaleString('en')} bytes) in this conversation's workspace: see the Files panel.`
    case 'edit':
      return `Changed **${data.path}** (${data.replaced} replacement${data.replaced === 1 ? '' : 's'}).`
    case 'read':
      return `**${data.path}**:\n\n${fence(String(data.content ?? ''))}`
    case 'ls': {
      const entries = Array.isArray(data.entries) ? data.entries : []
      if (entries.length === 0) return 'This conversation\'s workspace has no files yet. Ask me to "save this as notes.md" after an answer.'
      return `This conversation's workspace holds:\n\n${entries.map((entry: any) => `- \`${entry.name}\` (${entry.type === 'folder' ? `${entry.files} files, ` : ''}${Number(entry.size).toLocaleString('en')} bytes)`).join('\n')}`
    }
    case 'grep': {
      const matches = Array.isArray(data.matches) ? data.matches : []
      if (matches.length === 0) return 'No line of the workspace\'s files matches.'
      return `Found:\n\n${matches.map((match: any) => `- \`${match.path}:${match.line}\` ${match.text}`).join('\n')}`
    }
    case 'run_code': {
      const parts = [
        data.stdout ? `Output:\n\n${fence(String(data.stdout).trimEnd())}` : '',
        data.result !== undefined ? `Result: \`${JSON.stringify(data.result)}\`` : '',
        data.error ? `It failed: ${String(data.error).split('\n')[0]}` : '',
        Array.isArray(data.filesWritten) && data.filesWritten.length > 0 ? `Wrote ${data.filesWritten.map((path: string) => `\`${path}\``).join(', ')}.` : '',
      ].filter(Boolean)
      return parts.length > 0 ? parts.join('\n\n') : 'The code ran and printed nothing.'
    }
    default:
      return undefined
  }
}
