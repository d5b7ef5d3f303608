/**
 * Inbound webhooks of workflows: a secret URL per workflow that starts a run from a JSON body.
 * The URL's token is `<hook id>.<secret>`: the hook id finds the hook, the secret is kept only as
 * its SHA-256 and compared in constant time. Optionally, bodies must be signed: an HMAC-SHA256 of
 * the raw body, hex, in a header the owner names (GitHub's `X-Hub-Signature-256: sha256=<hex>`
 * form is taken too); that signing secret is kept sealed. Hooks live in the settings store, which
 * every instance shares, and are counted per hook against a rate.
 *
 * Retries: a call with an `Idempotency-Key` header starts its run under an id made from the hook
 * and the key, so a retried call (the sender timed out, or crashed, and sends again) finds the run
 * the first one started instead of starting another; two at once collide on that id in the store.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { readJsonSetting, type SettingsStore } from '../stores/settings/settings-store'
import { derivedRunId } from './run-ids'
import type { SecretBox } from '../security/secret-box'
import type { LimiterFactory } from '../stores/rate-limits/limiters'
import { DomainError, type HttpAnswer } from '../domain-error'
import type { WorkflowWebhookCreated, WorkflowWebhookStatus } from '../../../shared/types/workflow-webhook'

const HOOK_ID = /^[A-Za-z0-9_-]{22}$/
const SECRET = /^[A-Za-z0-9_-]{43}$/
const HEADER_NAME = /^[A-Za-z][A-Za-z0-9-]{0,63}$/
/** Printable ASCII without spaces, as Stripe's and the IETF draft's keys are (a UUID fits). */
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/

/** A hook that admitted a call: what to run, for whom, and under which id when the call may be a retry. */
export interface AdmittedWebhookCall {
  workflowId: string
  userId: string
  /** The run's id when the call carried an Idempotency-Key: the same for every retry of it. */
  runId?: string
}

/** The run id of a call to hook `hookId` with `idempotencyKey` (run-ids.ts). */
export function webhookRunId(hookId: string, idempotencyKey: string): string {
  return derivedRunId(hookId, idempotencyKey)
}

interface StoredHook {
  workflowId: string
  userId: string
  secretSha256: string
  createdAt: number
  signing?: { header: string, secretSealed: string }
}

/** Why a webhook call is refused: 400 (a malformed Idempotency-Key), 401 (unknown hook, wrong secret or signature) or 429 (too many runs). */
export class WebhookRefusal extends DomainError {
  override name = 'WebhookRefusal'
  constructor(readonly statusCode: 400 | 401 | 429, message: string, readonly retryAfterSeconds?: number) {
    super(message)
  }

  httpAnswer(): HttpAnswer {
    const statusMessage = { 400: 'Bad webhook call', 401: 'Webhook refused', 429: 'Too many webhook calls' }[this.statusCode]
    return { statusCode: this.statusCode, statusMessage, message: this.message, ...(this.retryAfterSeconds ? { retryAfterSeconds: this.retryAfterSeconds } : {}), ...(this.statusCode === 429 ? { refusedBy: 'webhook_rate' } : {}) }
  }
}

const sha256 = (text: string) => createHash('sha256').update(text).digest()
const hookKey = (hookId: string) => `workflow-hook:${hookId}`
const hookOfKey = (workflowId: string) => `workflow-hook-of:${workflowId}`

/** Whether `given` (hex, or `sha256=<hex>`) is the HMAC-SHA256 of `body` with `secret`, compared in constant time. */
export function signatureMatches(secret: string, body: string, given: string | undefined): boolean {
  if (!given) return false
  const hex = given.trim().replace(/^sha256=/i, '')
  if (!/^[0-9a-f]{64}$/i.test(hex)) return false
  const expected = createHmac('sha256', secret).update(body, 'utf8').digest()
  return timingSafeEqual(expected, Buffer.from(hex, 'hex'))
}

/** The webhooks of workflows (see the file comment). */
export class WorkflowWebhooks {
  private readonly limiter

  constructor(private readonly options: { settings: SettingsStore, secretBox: SecretBox, limiterFor: LimiterFactory, runsPerMinute: number, now?: () => number }) {
    this.limiter = options.limiterFor({ keyPrefix: 'workflow-hook', points: options.runsPerMinute, duration: 60 })
  }

  /** Makes the workflow's webhook, or a new one in place of the old (whose URL stops working). Its path is shown only now. */
  async create(workflowId: string, userId: string, signing?: { header: string, secret: string }): Promise<WorkflowWebhookCreated> {
    if (signing && !HEADER_NAME.test(signing.header)) throw new Error('The signature header must be a header name such as X-Signature-256.')
    await this.remove(workflowId)
    const hookId = randomBytes(16).toString('base64url')
    const secret = randomBytes(32).toString('base64url')
    const stored: StoredHook = {
      workflowId,
      userId,
      secretSha256: sha256(secret).toString('hex'),
      createdAt: this.options.now?.() ?? Date.now(),
      ...(signing ? { signing: { header: signing.header.toLowerCase(), secretSealed: this.options.secretBox.seal(signing.secret) } } : {}),
    }
    await this.options.settings.setSetting(hookKey(hookId), JSON.stringify(stored))
    await this.options.settings.setSetting(hookOfKey(workflowId), hookId)
    return { exists: true, createdAt: stored.createdAt, ...(stored.signing ? { signatureHeader: stored.signing.header } : {}), path: `/api/hooks/workflows/${hookId}.${secret}` }
  }

  /** Whether the workflow has a webhook, and how it is set up (never its secrets). */
  async status(workflowId: string): Promise<WorkflowWebhookStatus> {
    const hookId = await this.options.settings.getSetting(hookOfKey(workflowId))
    const stored = hookId ? await this.read(hookId) : null
    if (!stored) return { exists: false }
    return { exists: true, createdAt: stored.createdAt, ...(stored.signing ? { signatureHeader: stored.signing.header } : {}) }
  }

  /** Removes the workflow's webhook (its URL stops working at once). */
  async remove(workflowId: string): Promise<void> {
    const hookId = await this.options.settings.getSetting(hookOfKey(workflowId))
    if (hookId && HOOK_ID.test(hookId)) await this.options.settings.deleteSettings(hookKey(hookId))
    await this.options.settings.deleteSettings(hookOfKey(workflowId))
  }

  /**
   * The workflow and owner a call with `token` and `body` may start a run of, or `WebhookRefusal`:
   * 401 for a token that is not a live hook's or a missing or wrong signature, 429 past the rate,
   * 400 for an `Idempotency-Key` header that is not 1 to 255 printable characters.
   */
  async admit(token: string, body: string, header: (name: string) => string | undefined): Promise<AdmittedWebhookCall> {
    const [hookId, secret] = token.split('.')
    const unknown = new WebhookRefusal(401, 'No webhook answers to this URL: it may have been rotated or removed.')
    if (!hookId || !secret || !HOOK_ID.test(hookId) || !SECRET.test(secret)) throw unknown
    const stored = await this.read(hookId)
    if (!stored || !timingSafeEqual(sha256(secret), Buffer.from(stored.secretSha256, 'hex'))) throw unknown
    // A signing secret that no longer opens (the server secret changed) refuses every call: make the hook again.
    const signingSecret = stored.signing ? this.options.secretBox.open(stored.signing.secretSealed) : undefined
    if (stored.signing && (!signingSecret || !signatureMatches(signingSecret, body, header(stored.signing.header)))) {
      throw new WebhookRefusal(401, `The body's signature is missing or wrong: send the HMAC-SHA256 of the raw body, in hex, in the ${stored.signing.header} header.`)
    }
    const idempotencyKey = header('idempotency-key')
    if (idempotencyKey !== undefined && !IDEMPOTENCY_KEY.test(idempotencyKey)) {
      throw new WebhookRefusal(400, 'The Idempotency-Key header must be 1 to 255 printable characters without spaces (a UUID, say), the same for every retry of one call.')
    }
    try {
      await this.limiter.consume(hookId)
    } catch (refusal) {
      const waitMs = (refusal as { msBeforeNext?: number }).msBeforeNext ?? 60_000
      throw new WebhookRefusal(429, `This webhook started ${this.options.runsPerMinute} runs in the last minute; try again in ${Math.ceil(waitMs / 1000)} s.`, Math.ceil(waitMs / 1000))
    }
    return { workflowId: stored.workflowId, userId: stored.userId, ...(idempotencyKey !== undefined ? { runId: webhookRunId(hookId, idempotencyKey) } : {}) }
  }

  private read(hookId: string): Promise<StoredHook | null> {
    return readJsonSetting(this.options.settings, hookKey(hookId), null)
  }
}
