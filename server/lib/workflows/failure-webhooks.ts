/**
 * A workflow's failure webhook: a URL its owner gives, called when a run of the workflow fails,
 * with the failure as JSON, signed the Standard Webhooks way (`webhook-id`, `webhook-timestamp`,
 * `webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">` with the secret shown once
 * when the URL is set). A URL often carries a token (a chat app's incoming hook), so it is kept
 * sealed, with the secret, and shown again only by its host.
 *
 * The call goes through web_fetch's guard (public addresses only, or the operator's allowed
 * networks; no redirect; a timeout), up to three tries a second or two apart. Delivery is at least
 * once: a crash between the call and the run's end being kept calls it again after the restart,
 * with the same `webhook-id` (made from the failed run's id), which is what receivers deduplicate
 * by. A hook that cannot be reached leaves the owner a notification (failure-handlers.ts).
 */
import { createHmac, randomBytes } from 'node:crypto'
import type { SecretBox } from '../security/secret-box'
import type { SettingsStore } from '../stores/settings/settings-store'
import { guardedFetch, WebFetchError, type GuardedFetchOptions } from '../tools/web/guarded-fetch'
import { DomainError, type HttpAnswer } from '../domain-error'

/** Tries of one call, and the wait after each failed one. */
const TRIES = 3
const WAIT_MS = [1_000, 2_000]
const TIMEOUT_MS = 10_000

const hookKey = (workflowId: string) => `workflow-failure-webhook:${workflowId}`

interface StoredHook {
  userId: string
  /** `{ url, secret }`, sealed. */
  sealed: string
  host: string
  createdAt: number
}

/** What a person sees of a failure webhook. */
export interface FailureWebhookStatus {
  exists: boolean
  /** Where it calls (the host only: the rest may be a secret). */
  host?: string
  createdAt?: number
}

/** A URL that cannot be a webhook (answered 400). */
export class FailureWebhookError extends DomainError {
  override name = 'FailureWebhookError'
  httpAnswer(): HttpAnswer {
    return { statusCode: 400, statusMessage: 'Invalid webhook URL', message: this.message }
  }
}

/** The call out: where the guard lets it go, and as whom. */
export interface FailureWebhookOptions {
  settings: Pick<SettingsStore, 'getSetting' | 'setSetting' | 'deleteSettings'>
  secretBox: SecretBox
  /** web_fetch's guard settings (its allowed networks). */
  guard: Pick<GuardedFetchOptions, 'allowed' | 'resolve'>
  userAgent: string
  /** Waits between tries (tests pass a quicker one). */
  wait?: (ms: number) => Promise<void>
}

/** The Standard Webhooks signature of `body` sent as message `id` at `timestamp` (seconds). */
export function webhookSignature(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64')
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`
}

/** Failure webhooks, kept per workflow (see the file comment). */
export class FailureWebhooks {
  constructor(private readonly options: FailureWebhookOptions) {}

  /** Sets the workflow's failure webhook to `url`; returns the signing secret, shown this once. 400 for a URL that cannot be one. */
  async set(workflowId: string, userId: string, url: string): Promise<{ secret: string, status: FailureWebhookStatus }> {
    let parsed: URL
    try {
      parsed = new URL(url)
    } catch {
      throw new FailureWebhookError('Give a full URL, starting with https:// (or http://).')
    }
    if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw new FailureWebhookError('A webhook URL starts with https:// (or http://).')
    if (parsed.username || parsed.password) throw new FailureWebhookError('A webhook URL may not carry a user name or password; put a token in its path or query.')
    if (url.length > 2_000) throw new FailureWebhookError('A webhook URL is at most 2,000 characters.')
    const secret = `whsec_${randomBytes(24).toString('base64')}`
    const stored: StoredHook = { userId, sealed: this.options.secretBox.seal(JSON.stringify({ url, secret })), host: parsed.host, createdAt: Date.now() }
    await this.options.settings.setSetting(hookKey(workflowId), JSON.stringify(stored))
    return { secret, status: { exists: true, host: stored.host, createdAt: stored.createdAt } }
  }

  async status(workflowId: string): Promise<FailureWebhookStatus> {
    const stored = await this.read(workflowId)
    return stored ? { exists: true, host: stored.host, createdAt: stored.createdAt } : { exists: false }
  }

  /** Removes the workflow's failure webhook (it was deleted, or its owner removed the hook). */
  remove(workflowId: string): Promise<void> {
    return this.options.settings.deleteSettings(hookKey(workflowId))
  }

  /**
   * Calls the workflow's failure webhook, if it has one, with `payload` as message `id`: true once
   * it answered 2xx, false with no hook; throws `WebFetchError` saying why after the last try.
   */
  async call(workflowId: string, userId: string, id: string, payload: Record<string, unknown>): Promise<boolean> {
    const stored = await this.read(workflowId)
    if (!stored || stored.userId !== userId) return false
    const opened = this.options.secretBox.open(stored.sealed)
    // Sealed under another server secret (it was changed): the hook must be set again.
    if (opened === undefined) throw new WebFetchError('its URL was sealed under another server secret; set the failure webhook again.')
    const { url, secret } = JSON.parse(opened) as { url: string, secret: string }
    const body = JSON.stringify(payload)
    const wait = this.options.wait ?? (ms => new Promise(resolve => setTimeout(resolve, ms)))
    let last: Error | undefined
    for (let attempt = 0; attempt < TRIES; attempt++) {
      if (attempt > 0) await wait(WAIT_MS[attempt - 1]!)
      const timestamp = Math.floor(Date.now() / 1000)
      try {
        const answer = await guardedFetch(url, {
          ...this.options.guard,
          maxBytes: 4_096,
          timeoutMs: TIMEOUT_MS,
          maxRedirects: 0,
          userAgent: this.options.userAgent,
          send: { body, headers: { 'content-type': 'application/json', 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': webhookSignature(secret, id, timestamp, body), 'idempotency-key': id } },
        })
        if (answer.status >= 200 && answer.status < 300) return true
        if (answer.status >= 300 && answer.status < 400) {
          last = new WebFetchError(`${stored.host} answered with a redirect (${answer.status}); a webhook is called at its own URL only, so give the URL it redirects to.`)
          break
        }
        last = new WebFetchError(`${stored.host} answered ${answer.status}.`)
        // A refusal (4xx but a rate limit or a timeout) would be refused again.
        if (answer.status >= 400 && answer.status < 500 && answer.status !== 408 && answer.status !== 429) break
      } catch (error) {
        last = error instanceof WebFetchError ? error : new WebFetchError(`${stored.host} could not be called: ${(error as Error).message}.`)
      }
    }
    throw last ?? new WebFetchError(`${stored.host} could not be called.`)
  }

  private async read(workflowId: string): Promise<StoredHook | null> {
    const raw = await this.options.settings.getSetting(hookKey(workflowId))
    return raw ? JSON.parse(raw) as StoredHook : null
  }
}
