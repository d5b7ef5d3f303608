/**
 * Web Push: a note left for a person (an answer or a run ended with no tab watching it, or waits
 * for them) also goes to every device they turned notifications on for, so it reaches them with
 * every tab closed. The server's VAPID keys are made at first use and kept sealed in the settings
 * store (one pair for every instance); each person's devices (the push service's endpoint and the
 * keys that encrypt for it) are kept sealed too: they let anyone who holds them push to the device.
 *
 * A push is encrypted for its device (RFC 8291, aes128gcm, by `web-push`) and sent through
 * web_fetch's guard (public addresses only, or the operator's allowed networks): an endpoint is
 * a URL a browser gave, so a person could name an internal one. A device its push service says is
 * gone (404, 410) is forgotten.
 *
 * Exactly once: a push follows the note it announces once that is kept. A crash after the note
 * and before the push loses that push (the note still shows on the next visit); a push service
 * that does not answer is not asked again. So a device is told at most once per note.
 */
import { createHash } from 'node:crypto'
import type { SecretBox } from '../security/secret-box'
import type { SettingsStore } from '../stores/settings/settings-store'
import { KeyedQueue } from '../stores/settings/keyed-queue'
import { guardedFetch, type GuardedFetchOptions } from '../tools/web/guarded-fetch'
import { RefusalError } from '../domain-error'
import type { PushDevice } from '../../../shared/types/push'
import { pushDeviceId } from '../../../shared/push-device-id'
import type { PushSubscriptionInput } from '../../../shared/schemas/push'
import type { JobNotification } from '../../../shared/types/job'
import type { JobStore, NewJobNotification } from '../stores/jobs/job-store'

/** The web-push library (its encryption and signing), loaded the first time a push is sent: most start-ups never send one. */
const loadWebPush = async () => (await import('web-push')).default

const KEYS_SETTING = 'web-push:vapid'
const devicesKey = (userId: string) => `web-push-devices:${userId}`
/** Devices one person may have notifications on for. */
export const MAX_PUSH_DEVICES = 10
/** How long a push service keeps a push for a device that is offline (seconds). */
const PUSH_TTL_SECONDS = 24 * 3600
const PUSH_TIMEOUT_MS = 10_000

interface StoredDevice extends PushDevice {
  endpoint: string
  keys: { p256dh: string, auth: string }
}

/** What a push says: it shows as a notification of the device, which opens `url` when clicked. */
export interface PushMessage {
  title: string
  body: string
  url: string
  /** A notification with the same tag replaces the one before (one per job). */
  tag: string
}

export interface WebPushOptions {
  /** Off (`NUXT_PUSH_ENABLED=false`): every ask is refused with 404 saying so, and nothing is sent. */
  enabled: boolean
  settings: SettingsStore
  secretBox: SecretBox
  /** web_fetch's guard settings (its allowed networks). */
  guard: Pick<GuardedFetchOptions, 'allowed' | 'resolve'>
  /** Who sends the pushes (VAPID's `sub`): a mailto: or https: URL of the operator. */
  subject: string
  logger?: { warn: (message: string, ...details: unknown[]) => void }
}

export class WebPush {
  private readonly edits = new KeyedQueue()
  private keys: Promise<{ publicKey: string, privateKey: string }> | undefined

  constructor(private readonly options: WebPushOptions) {}

  /** The server's public key, which a browser subscribes with (made the first time it is asked for). */
  async publicKey(): Promise<string> {
    this.assertOn()
    return (await this.vapidKeys()).publicKey
  }

  /** The devices `userId` has notifications on for. */
  async devices(userId: string): Promise<PushDevice[]> {
    this.assertOn()
    return (await this.read(userId)).map(({ id, label, host, createdAt }) => ({ id, label, host, createdAt }))
  }

  /** Turns notifications on for a device (the same endpoint again: its keys and name are updated). */
  subscribe(userId: string, subscription: PushSubscriptionInput): Promise<PushDevice> {
    this.assertOn()
    return this.edits.run(userId, async () => {
      const devices = await this.read(userId)
      const id = await pushDeviceId(subscription.endpoint)
      const others = devices.filter(device => device.id !== id)
      if (others.length >= MAX_PUSH_DEVICES) throw new RefusalError(`Notifications are on for ${MAX_PUSH_DEVICES} devices already, the most one person may have; turn them off on one first (Settings).`, 409)
      const device: StoredDevice = { id, label: subscription.label || 'A browser', host: new URL(subscription.endpoint).host, createdAt: Date.now(), endpoint: subscription.endpoint, keys: subscription.keys }
      await this.write(userId, [...others, device])
      return { id, label: device.label, host: device.host, createdAt: device.createdAt }
    })
  }

  /** Turns notifications off for a device; false when it had none. */
  unsubscribe(userId: string, id: string): Promise<boolean> {
    return this.edits.run(userId, async () => {
      const devices = await this.read(userId)
      const rest = devices.filter(device => device.id !== id)
      if (rest.length === devices.length) return false
      await this.write(userId, rest)
      return true
    })
  }

  /** Forgets every device of a deleted account. */
  deleteUser(userId: string): Promise<void> {
    return this.options.settings.deleteSettings(devicesKey(userId))
  }

  /** Sends `message` to every device of `userId` (each once; never throws: a failure is logged). */
  async send(userId: string, message: PushMessage): Promise<void> {
    if (!this.options.enabled) return
    const devices = await this.read(userId)
    if (devices.length === 0) return
    const [{ publicKey, privateKey }, webPush] = await Promise.all([this.vapidKeys(), loadWebPush()])
    const payload = JSON.stringify(message)
    const gone: string[] = []
    await Promise.all(devices.map(async (device) => {
      try {
        const request = webPush.generateRequestDetails({ endpoint: device.endpoint, keys: device.keys }, payload, {
          vapidDetails: { subject: this.options.subject, publicKey, privateKey },
          TTL: PUSH_TTL_SECONDS,
          contentEncoding: 'aes128gcm',
          topic: createHash('sha256').update(message.tag).digest('base64url').slice(0, 32),
        })
        const answer = await guardedFetch(request.endpoint, {
          ...this.options.guard,
          maxBytes: 4_096,
          timeoutMs: PUSH_TIMEOUT_MS,
          maxRedirects: 0,
          userAgent: 'or3-chat web push',
          send: { body: request.body, headers: Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, String(value)])) },
        })
        if (answer.status === 404 || answer.status === 410) gone.push(device.id)
        else if (answer.status >= 300) this.options.logger?.warn(`The push service at ${device.host} answered ${answer.status}`, { userId })
      } catch (error) {
        this.options.logger?.warn(`Could not push to a device at ${device.host}: ${(error as Error).message}`, { userId })
      }
    }))
    for (const id of gone) await this.unsubscribe(userId, id)
  }

  private assertOn(): void {
    if (!this.options.enabled) throw new RefusalError('Notifications to devices are switched off on this server (NUXT_PUSH_ENABLED=false).', 404)
  }

  private vapidKeys(): Promise<{ publicKey: string, privateKey: string }> {
    this.keys ??= this.loadOrMakeKeys().catch((error: unknown) => {
      this.keys = undefined
      throw error
    })
    return this.keys
  }

  /** The kept pair, or a new one kept (read back after: of two instances making one at once, both use the one kept last). */
  private async loadOrMakeKeys(): Promise<{ publicKey: string, privateKey: string }> {
    const kept = await this.openKeys()
    if (kept) return kept
    const made = (await loadWebPush()).generateVAPIDKeys()
    await this.options.settings.setSetting(KEYS_SETTING, this.options.secretBox.seal(JSON.stringify(made)))
    return await this.openKeys() ?? made
  }

  private async openKeys(): Promise<{ publicKey: string, privateKey: string } | undefined> {
    const sealed = await this.options.settings.getSetting(KEYS_SETTING)
    const opened = sealed ? this.options.secretBox.open(sealed) : undefined
    // Sealed under another server secret: new keys (devices subscribe again).
    return opened ? JSON.parse(opened) as { publicKey: string, privateKey: string } : undefined
  }

  private async read(userId: string): Promise<StoredDevice[]> {
    const sealed = await this.options.settings.getSetting(devicesKey(userId))
    const opened = sealed ? this.options.secretBox.open(sealed) : undefined
    return opened ? JSON.parse(opened) as StoredDevice[] : []
  }

  private write(userId: string, devices: StoredDevice[]): Promise<void> {
    return devices.length === 0 ? this.options.settings.deleteSettings(devicesKey(userId)) : this.options.settings.setSetting(devicesKey(userId), this.options.secretBox.seal(JSON.stringify(devices)))
  }
}

/** Where a note's push opens: the run's page for a workflow run, else the conversation. */
export function pushMessageOf(note: JobNotification): PushMessage {
  const url = note.threadId.startsWith('workflow:') ? `/workflows/runs/${encodeURIComponent(note.jobId)}` : `/chat/${encodeURIComponent(note.threadId)}`
  return { title: note.title, body: note.body, url, tag: note.kind === 'input-needed' ? `wait:${note.jobId}` : note.jobId }
}

/**
 * `store` with every note it keeps also pushed to its person's devices (after it is kept, without
 * waiting: a slow push service holds up no job). Every place that leaves a note goes through it.
 */
export function pushingNotes(store: JobStore, push: WebPush, logger?: WebPushOptions['logger']): JobStore {
  const notes: JobStore['notifications'] = {
    add: async (note: NewJobNotification) => {
      const kept = await store.notifications.add(note)
      void push.send(kept.userId, pushMessageOf(kept)).catch((error: unknown) => logger?.warn(`Could not push a note: ${(error as Error).message}`))
      return kept
    },
    list: (userId, options) => store.notifications.list(userId, options),
    markRead: (userId, ids, now) => store.notifications.markRead(userId, ids, now),
  }
  const replaced: keyof JobStore = 'notifications'
  return new Proxy(store, {
    get(target, property, receiver) {
      return property === replaced ? notes : Reflect.get(target, property, receiver)
    },
  })
}
