/**
 * A conversation as a file to keep: Markdown (what was said, with each answer's model and tool
 * calls) or JSON (the thread and its messages exactly as the API gives them). Made in the browser
 * from what the page already has; nothing is sent anywhere.
 */
import type { ThreadWithMessages } from '../../shared/types/thread'
import { tr } from './i18n'

/** A file name from the title: letters, digits and dashes, at most 60, never empty. */
export function exportFileName(title: string, extension: 'md' | 'json'): string {
  const base = title.normalize('NFKD').replace(/[^\w\s-]/g, '').trim().replace(/[\s_-]+/g, '-').slice(0, 60).replace(/-+$/, '').toLowerCase()
  return `${base || 'conversation'}.${extension}`
}

/** The conversation as Markdown: a heading, then each turn under who said it. */
export function threadMarkdown({ thread, messages }: ThreadWithMessages): string {
  const lines = [`# ${thread.title}`, '', `_Exported ${new Date().toISOString()} · ${messages.length} messages_`, '']
  for (const message of messages) {
    const who = message.role === 'user' ? tr('export.you') : message.model ? tr('export.assistantModel', { model: message.model }) : tr('export.assistant')
    lines.push(`## ${who}`, '')
    for (const call of message.toolCalls ?? []) lines.push(`> Tool \`${call.name}\`(${call.arguments || '{}'}) → ${call.error ? `error: ${call.error}` : call.status}`)
    if (message.toolCalls?.length) lines.push('')
    lines.push(message.content || (message.error ? `_(failed: ${message.error.message})_` : '_(no text)_'), '')
  }
  return `${lines.join('\n').trimEnd()}\n`
}

/** The conversation as JSON, indented. */
export function threadJson(conversation: ThreadWithMessages): string {
  return `${JSON.stringify({ ...conversation, exportedAt: new Date().toISOString() }, null, 2)}\n`
}

/** Saves `text` as a download named `name`. */
export function downloadText(name: string, type: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }))
  const link = document.createElement('a')
  link.href = url
  link.download = name
  document.body.append(link)
  link.click()
  link.remove()
  setTimeout(() => URL.revokeObjectURL(url), 1_000)
}
