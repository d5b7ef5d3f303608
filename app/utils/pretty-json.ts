/** JSON text indented for reading (tool arguments and results); other text as it is, none as `fallback`. */
export function prettyJson(text: string | undefined, fallback = ''): string {
  if (!text) return fallback
  try {
    return JSON.stringify(JSON.parse(text), null, 2)
  } catch {
    return text
  }
}
