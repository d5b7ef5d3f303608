/** Thread titles: taken from the first message until the user renames the thread. */

/** A title from the first words of a message. */
export function titleFromMessage(content: string): string {
  const flat = content.replace(/\s+/g, ' ').trim()
  if (!flat) return 'New chat'
  return flat.length > 60 ? `${flat.slice(0, 59).replace(/\s+\S*$/, '')}…` : flat
}
