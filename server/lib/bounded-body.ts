/**
 * Reading an upstream's answer without trusting its size: the body as text, or undefined once it
 * passes `maxBytes` (the rest is not read, and the stream is cancelled).
 */
export async function readTextUpTo(response: Response, maxBytes: number): Promise<string | undefined> {
  const bytes = await readBytesUpTo(response, maxBytes)
  return bytes === undefined ? undefined : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8')
}

/** The body's bytes, or undefined once it passes `maxBytes` (the rest is not read, and the stream is cancelled). */
export async function readBytesUpTo(response: Response, maxBytes: number): Promise<Uint8Array | undefined> {
  if (Number(response.headers.get('content-length') ?? 0) > maxBytes) {
    await response.body?.cancel()
    return undefined
  }
  const reader = response.body?.getReader()
  if (!reader) return new Uint8Array(0)
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
  return new Uint8Array(Buffer.concat(parts))
}
