/**
 * A message's long fields (its text, its reasoning, its tool calls as JSON) past INLINE_CHARS kept
 * in parts beside it, so one long answer (up to a million characters, three bytes each in UTF-8
 * for most scripts) never makes its document pass Convex's 1 MiB. The message document keeps the
 * first INLINE_CHARS of each and how many parts follow.
 */
import type { Doc } from '../_generated/dataModel'
import type { MutationCtx, QueryCtx } from '../_generated/server'

/** Characters of each long field on the message document itself; three of them and the search text stay under 1 MiB. */
export const INLINE_CHARS = 50_000
/** Characters per part. */
export const PART_CHARS = 200_000

export type LongField = 'content' | 'reasoning' | 'tool_calls'
const PARTS_FIELD = { content: 'content_parts', reasoning: 'reasoning_parts', tool_calls: 'tool_calls_parts' } as const

/** Splits `text` into what the document keeps and writes the rest as parts; returns the document's fields. */
export async function writeLongField(ctx: MutationCtx, messageId: string, field: LongField, text: string): Promise<Record<string, string | number | undefined>> {
  for (const part of await ctx.db.query('thread_message_parts').withIndex('by_message_field_index', q => q.eq('message_id', messageId).eq('field', field)).collect()) {
    await ctx.db.delete(part._id)
  }
  const rest = text.slice(INLINE_CHARS)
  let parts = 0
  for (let offset = 0; offset < rest.length; offset += PART_CHARS) {
    await ctx.db.insert('thread_message_parts', { message_id: messageId, field, index: parts++, text: rest.slice(offset, offset + PART_CHARS) })
  }
  return { [field]: text.slice(0, INLINE_CHARS), [PARTS_FIELD[field]]: parts > 0 ? parts : undefined }
}

/** The whole value of `field` (the document's part and the parts after it). */
export async function readLongField(ctx: QueryCtx, row: Doc<'thread_messages'>, field: LongField): Promise<string | undefined> {
  const inline = row[field]
  if (!row[PARTS_FIELD[field]]) return inline
  const parts = await ctx.db.query('thread_message_parts').withIndex('by_message_field_index', q => q.eq('message_id', row.message_id).eq('field', field)).collect()
  return (inline ?? '') + parts.map(part => part.text).join('')
}

/** Deletes every part of a message (at most `limit`); true when none is left. */
export async function deleteMessageParts(ctx: MutationCtx, messageId: string, limit: number): Promise<boolean> {
  const parts = await ctx.db.query('thread_message_parts').withIndex('by_message_field_index', q => q.eq('message_id', messageId)).take(limit + 1)
  for (const part of parts.slice(0, limit)) await ctx.db.delete(part._id)
  return parts.length <= limit
}
