/**
 * Inbound webhooks of workflows: a secret URL per workflow that starts a run from a JSON body.
 * The URL's token is `<hook id>.<secret>`: the hook id finds the hook, the secret is kept only as
 * its SHA-256 and compared in constant time. Optionally, calls must be signed (the signing secret
 * kept sealed), in one of two schemes:
 * - `standard-webhooks` (Standard Webhooks): `webhook-signature: v1,<base64 HMAC-SHA256 of
 *   "<webhook-id>.<webhook-timestamp>.<body>">`, the timestamp within `REPLAY_WINDOW_SECONDS` of
 *   this server's clock; a secret written `whsec_<base64>` is that key's bytes.
 * - `hmac-sha256`: an HMAC-SHA256 of the raw body alone, hex, in a header the owner names
 *   (GitHub's `X-Hub-Signature-256: sha256=<hex>` form is taken too).
 * Hooks live in the settings store, which every instance shares, and are counted per hook against a rate.
 *
 * Once only: a call's run gets an id made from the hook and what makes the call one delivery, so
 * a second call with it finds the run the first started instead of starting another (two at once
 * collide on that id in the store): a signed call's delivery is its `webhook-id` (Standard
 * Webhooks: signed, and refused past the timestamp window) or its body (body-only HMAC: the same
 * signed body is the same delivery for as long as its run is kept); an unsigned call's is its
 * `Idempotency-Key` header, when it has one (a retry of a call that timed out or crashed).
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { readJsonSetting, type SettingsStore } from '../stores/settings/settings-store'
import { derivedRunId } from './run-ids'
import type { SecretBox } from '../security/secret-box'
import type { LimiterFactory } from '../stores/rate-limits/limiters'
import { DomainError, type HttpAnswer } from '../domain-error'
import type { WebhookSignatureScheme, WorkflowWebhookCreated, WorkflowWebhookStatus } from '../../../shared/types/workflow-webhook'

const HOOK_ID = /^[A-Za-z0-9_-]{22}$/
const SECRET = /^[A-Za-z0-9_-]{43}$/
const HEADER_NAME = /^[A-Za-z][A-Za-z0-9-]{0,63}$/
/** Printable ASCII without spaces, as Stripe's and the IETF draft's keys are (a UUID fits). */
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/
/** How far a Standard Webhooks timestamp may be from this server's clock (the scheme's suggested 5 minutes). */
export const REPLAY_WINDOW_SECONDS = 300
/** Signatures one `webhook-signature` header may list (a sender rotating keys sends two). */
const MAX_SIGNATURES = 8
const STANDARD_SIGNATURE_HEADER = 'webhook-signature'

/** A hook that admitted a call: what to run, for whom, and under which id when the call may be a retry. */
export interface AdmittedWebhookCall {
  workflowId: string
  userId: string
  /** The run's id when the call names its delivery (signed, or with an Idempotency-Key): the same for every repeat of it. */
  runId?: string
}

/** How a hook's calls are signed, as its owner asked (the header only for `hmac-sha256`). */
export interface WebhookSigning {
  scheme?: WebhookSignatureScheme
  header?: string
  secret: string
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
  /** Absent `scheme`: `hmac-sha256` (hooks made before there were two). */
  signing?: { scheme?: WebhookSignatureScheme, header: string, secretSealed: string }
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

/** A hook as its owner sees it (never its secrets). */
function statusOf(stored: StoredHook): WorkflowWebhookStatus {
  return { exists: true, createdAt: stored.createdAt, ...(stored.signing ? { signatureScheme: stored.signing.scheme ?? 'hmac-sha256', signatureHeader: stored.signing.header } : {}) }
}
const hookKey = (hookId: string) => `workflow-hook:${hookId}`
const hookOfKey = (workflowId: string) => `workflow-hook-of:${workflowId}`

/** The HMAC key of a Standard Webhooks secret: `whsec_<base64>` is the key's bytes, anything else its UTF-8. */
function standardKey(secret: string): Buffer {
  return secret.startsWith('whsec_') ? Buffer.from(secret.slice('whsec_'.length), 'base64') : Buffer.from(secret, 'utf8')
}

/**
 * Checks a Standard Webhooks call at `nowMs`: its id, a timestamp within the window, and one of the
 * `v1,<base64>` signatures over `<id>.<timestamp>.<body>`. The delivery's id, or a refusal saying what is wrong.
 */
export function checkStandardSignature(secret: string, body: string, header: (name: string) => string | undefined, nowMs: number): { id: string } | { refusal: string } {
  const id = header('webhook-id')
  const timestamp = header('webhook-timestamp')
  const signatures = header(STANDARD_SIGNATURE_HEADER)
  if (!id || !IDEMPOTENCY_KEY.test(id) || !timestamp || !/^\d{1,12}$/.test(timestamp) || !signatures) {
    return { refusal: 'Sign calls with the Standard Webhooks headers: webhook-id (1 to 255 printable characters), webhook-timestamp (seconds since 1970) and webhook-signature (v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">).' }
  }
  const skew = Math.round(Math.abs(nowMs / 1000 - Number(timestamp)))
  if (skew > REPLAY_WINDOW_SECONDS) return { refusal: `The webhook-timestamp is ${skew} s away from this server's clock; at most ${REPLAY_WINDOW_SECONDS} s are accepted (a call is not taken again later). Send a fresh timestamp, or check the sender's clock.` }
  const expected = createHmac('sha256', standardKey(secret)).update(`${id}.${timestamp}.${body}`, 'utf8').digest()
  const matches = signatures.split(' ').slice(0, MAX_SIGNATURES).some((entry) => {
    const [version, value] = entry.split(',', 2)
    if (version !== 'v1' || !value || !/^[A-Za-z0-9+/]{43}=$/.test(value)) return false
    return timingSafeEqual(expected, Buffer.from(value, 'base64'))
  })
  return matches ? { id } : { refusal: 'The webhook-signature does not match: sign "<webhook-id>.<webhook-timestamp>.<raw body>" with HMAC-SHA256 and the hook\'s signing secret, base64, as v1,<signature>.' }
}

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

  /**
   * Makes the workflow's webhook, or a new one in place of the old (whose URL stops working). Its
   * path is shown only now. `signing` without a scheme: `hmac-sha256` when it names a header, else Standard Webhooks.
   */
  async create(workflowId: string, userId: string, signing?: WebhookSigning): Promise<WorkflowWebhookCreated> {
    const scheme: WebhookSignatureScheme | undefined = signing ? signing.scheme ?? (signing.header ? 'hmac-sha256' : 'standard-webhooks') : undefined
    const header = scheme === 'standard-webhooks' ? STANDARD_SIGNATURE_HEADER : signing?.header ?? ''
    if (scheme === 'hmac-sha256' && !HEADER_NAME.test(header)) throw new Error('The signature header must be a header name such as X-Signature-256.')
    await this.remove(workflowId)
    const hookId = randomBytes(16).toString('base64url')
    const secret = randomBytes(32).toString('base64url')
    const stored: StoredHook = {
      workflowId,
      userId,
      secretSha256: sha256(secret).toString('hex'),
      createdAt: this.options.now?.() ?? Date.now(),
      ...(signing && scheme ? { signing: { scheme, header: header.toLowerCase(), secretSealed: this.options.secretBox.seal(signing.secret) } } : {}),
    }
    await this.options.settings.setSetting(hookKey(hookId), JSON.stringify(stored))
    await this.options.settings.setSetting(hookOfKey(workflowId), hookId)
    return { ...statusOf(stored), path: `/api/hooks/workflows/${hookId}.${secret}` }
  }

  /** Whether the workflow has a webhook, and how it is set up (never its secrets). */
  async status(workflowId: string): Promise<WorkflowWebhookStatus> {
    const hookId = await this.options.settings.getSetting(hookOfKey(workflowId))
    const stored = hookId ? await this.read(hookId) : null
    return stored ? statusOf(stored) : { exists: false }
  }

  /** Removes the workflow's webhook (its URL stops working at once). */
  async remove(workflowId: string): Promise<void> {
    const hookId = await this.options.settings.getSetting(hookOfKey(workflowId))
    if (hookId && HOOK_ID.test(hookId)) await this.options.settings.deleteSettings(hookKey(hookId))
    await this.options.settings.deleteSettings(hookOfKey(workflowId))
  }

  /**
   * The workflow and owner a call with `token` and `body` may start a run of, or `WebhookRefusal`:
   * 401 for a token that is not a live hook's or a missing, wrong or stale signature, 429 past the
   * rate, 400 for an `Idempotency-Key` header that is not 1 to 255 printable characters.
   */
  async admit(token: string, body: string, header: (name: string) => string | undefined): Promise<AdmittedWebhookCall> {
    const [hookId, secret] = token.split('.')
    const unknown = new WebhookRefusal(401, 'No webhook answers to this URL: it may have been rotated or removed.')
    if (!hookId || !secret || !HOOK_ID.test(hookId) || !SECRET.test(secret)) throw unknown
    const stored = await this.read(hookId)
    if (!stored || !timingSafeEqual(sha256(secret), Buffer.from(stored.secretSha256, 'hex'))) throw unknown
    const delivery = stored.signing ? this.signedDelivery(stored.signing, body, header) : this.unsignedDelivery(header)
    try {
      await this.limiter.consume(hookId)
    } catch (refusal) {
      const waitMs = (refusal as { msBeforeNext?: number }).msBeforeNext ?? 60_000
      throw new WebhookRefusal(429, `This webhook started ${this.options.runsPerMinute} runs in the last minute; try again in ${Math.ceil(waitMs / 1000)} s.`, Math.ceil(waitMs / 1000))
    }
    return { workflowId: stored.workflowId, userId: stored.userId, ...(delivery !== undefined ? { runId: webhookRunId(hookId, delivery) } : {}) }
  }

  /** What makes a signed call one delivery, once its signature holds (else a 401 saying what is wrong). */
  private signedDelivery(signing: NonNullable<StoredHook['signing']>, body: string, header: (name: string) => string | undefined): string {
    // A signing secret that no longer opens (the server secret changed) refuses every call: make the hook again.
    const secret = this.options.secretBox.open(signing.secretSealed)
    if (!secret) throw new WebhookRefusal(401, 'This webhook\'s signing secret can no longer be read on this server (its secret changed): make the webhook again.')
    if (signing.scheme === 'standard-webhooks') {
      const checked = checkStandardSignature(secret, body, header, this.options.now?.() ?? Date.now())
      if ('refusal' in checked) throw new WebhookRefusal(401, checked.refusal)
      return `delivery:${checked.id}`
    }
    if (!signatureMatches(secret, body, header(signing.header))) {
      throw new WebhookRefusal(401, `The body's signature is missing or wrong: send the HMAC-SHA256 of the raw body, in hex, in the ${signing.header} header.`)
    }
    // The signature covers the body alone, so the body is what makes it one delivery: sent again, it is the same call.
    return `body:${sha256(body).toString('hex')}`
  }

  /** An unsigned call's delivery: its Idempotency-Key, when it sends one (400 for a malformed one). */
  private unsignedDelivery(header: (name: string) => string | undefined): string | undefined {
    const idempotencyKey = header('idempotency-key')
    if (idempotencyKey !== undefined && !IDEMPOTENCY_KEY.test(idempotencyKey)) {
      throw new WebhookRefusal(400, 'The Idempotency-Key header must be 1 to 255 printable characters without spaces (a UUID, say), the same for every retry of one call.')
    }
    return idempotencyKey
  }

  private read(hookId: string): Promise<StoredHook | null> {
    return readJsonSetting(this.options.settings, hookKey(hookId), null)
  }
}
