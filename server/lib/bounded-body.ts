/**
 * Reading an upstream's answer without trusting its size: the body as text, or undefined once it
 * passes `maxBytes` (the rest is not read, and the stream is cancelled).
 */
export async function readTextUpTo(response: Response, maxBytes: number): Promise<string | undefined> {
  if (Number(response.headers.get('content-length') ?? 0) > maxBytes) {
    await response.body?.cancel()
    return undefined
  }
  const reader = response.body?.getReader()
  if (!reader) return ''
  const parts: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > maxBytes) {
      await reader.cancel()
      return undefined
    }
    parts.push(value)
  }
  return Buffer.concat(parts).toString('utf8')
}
