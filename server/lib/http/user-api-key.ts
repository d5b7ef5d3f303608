import type { H3Event } from 'h3'

/** The user's own OpenRouter key from `X-OpenRouter-Key`, if sent (used for this request's job only). */
export function userApiKeyOf(event: H3Event): string | undefined {
  return event.headers.get('x-openrouter-key')?.trim() || undefined
}
