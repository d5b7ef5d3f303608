/**
 * Two-step sign-in for accounts with a password: after the password, a code from an
 * authenticator app (TOTP, RFC 6238 through `otpauth`: 6 digits, 30 s, SHA-1, as every app
 * reads it), one of the account's passkeys (passkeys.ts), or one of ten single-use recovery codes.
 *
 * Kept per account in the settings store: the app's secret sealed with the server's key (a copy of
 * the store does not give it), the last time step used (a code is good once: a code seen by someone
 * looking over a shoulder cannot be used again), and the recovery codes' SHA-256 hashes (shown
 * once, when the first second step is set up: the app or a passkey). Two-step sign-in is on while
 * the account has the app or a passkey. Every check is a read and a write under the store's lock,
 * so two sign-ins with the same code at once on two instances let one in. Wrong codes are counted
 * per account (five in fifteen minutes, then refused with Retry-After, even a right one), whoever
 * sends them; a right code forgets them.
 */
import { createHash, randomInt, timingSafeEqual } from 'node:crypto'
import { Secret, TOTP } from 'otpauth'
import type { RateLimiterAbstract } from 'rate-limiter-flexible'
import type { TwoStepSetup, TwoStepStatus } from '../../../shared/types/account'
import type { SettingsStore } from '../stores/settings/settings-store'
import { readJsonSetting } from '../stores/settings/settings-store'
import { SettingLocks } from '../stores/settings/setting-locks'
import type { SecretBox } from '../security/secret-box'
import { memoryLimiters, type LimiterFactory } from '../stores/rate-limits/limiters'
import { AuthError } from './auth-errors'

const PERIOD_S = 30
/** A setup not confirmed within this long is gone. */
const SETUP_MS = 15 * 60_000
const RECOVERY_CODES = 10
/** Wrong codes an account may get per window before further tries are refused. */
const WRONG_CODES = 5
const WRONG_CODE_WINDOW_S = 15 * 60

interface TwoStepState {
  /** The TOTP secret (base32), sealed; none while only passkeys are the second step. */
  secret?: string
  /** The last time step a code was accepted for. */
  lastStep: number
  /** SHA-256 (hex) of each unused recovery code. */
  recovery: string[]
  enabledAt: number
}

interface PendingSetup {
  secret: string
  expiresAt: number
}

const stateKey = (userId: string) => `two-step:${userId}:state`
const setupKey = (userId: string) => `two-step:${userId}:setup`
const hash = (code: string) => createHash('sha256').update(code).digest('hex')
/** A code as typed: spaces and dashes dropped, letters lower-cased. */
const normalise = (code: string) => code.slice(0, 64).replace(/[\s-]/g, '').toLowerCase()

/** Ten recovery codes, `xxxxx-xxxxx` of lower-case letters and digits (about 51 bits each). */
function recoveryCodes(): string[] {
  const alphabet = 'abcdefghjkmnpqrstuvwxyz23456789'
  const one = () => Array.from({ length: 10 }, () => alphabet[randomInt(alphabet.length)]).join('')
  return Array.from({ length: RECOVERY_CODES }, () => {
    const code = one()
    return `${code.slice(0, 5)}-${code.slice(5)}`
  })
}

/** How recovery codes are kept: each one's SHA-256 as typed codes are normalised. */
const storedCodes = (codes: readonly string[]) => codes.map(item => hash(normalise(item)))

/** Whether a second step is on: the kept state has the app, or the account has a passkey (codes alone, left by an interrupted set-up, are not). */
function inForce(state: TwoStepState | null, passkeys: number): state is TwoStepState {
  return Boolean(state && (state.secret || passkeys > 0))
}

function totp(secret: string, label: string, issuer: string): TOTP {
  return new TOTP({ issuer, label, secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: PERIOD_S })
}

export class TwoStepSignIn {
  private readonly locks: SettingLocks
  private readonly wrongCodes: RateLimiterAbstract

  constructor(
    private readonly settings: Pick<SettingsStore, 'getSetting' | 'setSetting' | 'deleteSettings' | 'tryLock' | 'unlock'>,
    private readonly box: SecretBox,
    options: {
      issuer: string
      /** Refuses (403, `wrong` as its words) unless `password` is the account's, counted like a sign-in. */
      confirmPassword: (userId: string, password: string, wrong: string) => Promise<void>
      /** How many passkeys the account has (each is a second step too). */
      passkeysOf: (userId: string) => Promise<number>
      limiterFor?: LimiterFactory
      now?: () => number
    },
  ) {
    this.confirmPassword = options.confirmPassword
    this.passkeysOf = options.passkeysOf
    this.issuer = options.issuer
    this.now = options.now ?? Date.now
    this.locks = new SettingLocks(settings, crypto.randomUUID(), { ttlMs: 10_000, attempts: 80, now: this.now, busyMessage: 'Two-step sign-in is being changed elsewhere; try again in a moment.' })
    this.wrongCodes = (options.limiterFor ?? memoryLimiters)({ keyPrefix: 'two-step-account', points: WRONG_CODES, duration: WRONG_CODE_WINDOW_S })
  }

  private readonly issuer: string
  private readonly now: () => number
  private readonly confirmPassword: (userId: string, password: string, wrong: string) => Promise<void>
  private readonly passkeysOf: (userId: string) => Promise<number>

  private state(userId: string): Promise<TwoStepState | null> {
    return readJsonSetting<TwoStepState | null>(this.settings, stateKey(userId), null)
  }

  async status(userId: string): Promise<TwoStepStatus> {
    const [state, passkeys] = await Promise.all([this.state(userId), this.passkeysOf(userId)])
    if (!inForce(state, passkeys)) return { enabled: false, app: false, passkeys }
    return { enabled: true, app: Boolean(state.secret), passkeys, recoveryCodesLeft: state.recovery.length, enabledAt: state.enabledAt }
  }

  /** Whether a password sign-in asks for a second step: the account has the app or a passkey. */
  async isEnabled(userId: string): Promise<boolean> {
    return (await this.status(userId)).enabled
  }

  /** A new secret to add to an authenticator app (not in force until `confirm`ed with a code from it). */
  async begin(userId: string, accountName: string): Promise<TwoStepSetup> {
    if ((await this.state(userId))?.secret) throw new AuthError('two-step-on', 'An authenticator app is already set up. Turn it off first to set up another app.')
    const secret = new Secret({ size: 20 }).base32
    const pending: PendingSetup = { secret: this.box.seal(secret), expiresAt: this.now() + SETUP_MS }
    await this.settings.setSetting(setupKey(userId), JSON.stringify(pending))
    return { secret, uri: totp(secret, accountName, this.issuer).toString() }
  }

  /**
   * Turns the app on with a code from it; answers the recovery codes when it is the account's first
   * second step (shown this once; with a passkey already, the codes made then go on working).
   */
  async confirm(userId: string, code: string): Promise<{ recoveryCodes: string[] }> {
    return this.locks.run(stateKey(userId), async () => {
      const pending = await readJsonSetting<PendingSetup | null>(this.settings, setupKey(userId), null)
      const secret = pending && pending.expiresAt > this.now() ? this.box.open(pending.secret) : undefined
      if (!secret) throw new AuthError('two-step-setup', 'Set up two-step sign-in again: the setup is older than 15 minutes, or was never started.')
      // Read once: a second reading could fall into the next time step and find the code too old.
      const step = this.stepOf(secret, normalise(code))
      await this.countWrong(userId, async () => step !== undefined)
      const kept = await this.keptState(userId)
      const codes = kept ? [] : recoveryCodes()
      const state: TwoStepState = { ...(kept ?? { recovery: storedCodes(codes), enabledAt: this.now() }), secret: pending!.secret, lastStep: step! }
      await this.settings.setSetting(stateKey(userId), JSON.stringify(state))
      await this.settings.setSetting(setupKey(userId), 'null')
      return { recoveryCodes: codes }
    })
  }

  /**
   * A passkey is being added: answers recovery codes to show (and keeps their hashes) when the
   * account had no second step yet; undefined when it has (its codes go on working). Called before
   * the passkey is stored: a crash between the two leaves codes that count for nothing (no second
   * step is on), and the next passkey makes new ones.
   */
  async passkeyAdding(userId: string): Promise<string[] | undefined> {
    return this.locks.run(stateKey(userId), async () => {
      if (await this.keptState(userId)) return undefined
      const codes = recoveryCodes()
      const state: TwoStepState = { lastStep: 0, recovery: storedCodes(codes), enabledAt: this.now() }
      await this.settings.setSetting(stateKey(userId), JSON.stringify(state))
      return codes
    })
  }

  /** A passkey was removed: with no app and no passkey left, two-step sign-in is off (its recovery codes go). */
  async passkeyRemoved(userId: string): Promise<void> {
    await this.locks.run(stateKey(userId), async () => {
      if (!inForce(await this.state(userId), await this.passkeysOf(userId))) await this.settings.setSetting(stateKey(userId), 'null')
    })
  }

  /** The state when a second step is on (the app or a passkey), else null (none, or codes left from an interrupted set-up). */
  private async keptState(userId: string): Promise<TwoStepState | null> {
    const state = await this.state(userId)
    // The app alone decides without counting passkeys.
    return state && (state.secret || inForce(state, await this.passkeysOf(userId))) ? state : null
  }

  /**
   * Checks the second step of a sign-in: a code from the app, good once (its time step must be
   * newer than the last used), or a recovery code, used up. 401 for a wrong code, 429 past the
   * wrong codes an account may get.
   */
  async check(userId: string, code: string): Promise<'app' | 'recovery'> {
    return this.locks.run(stateKey(userId), async () => {
      const state = await this.keptState(userId)
      if (!state) throw new AuthError('two-step-off', 'Two-step sign-in is not on for this account.')
      const typed = normalise(code)
      let used: 'app' | 'recovery' | undefined
      await this.countWrong(userId, async () => {
        const secret = state.secret ? this.box.open(state.secret) : undefined
        const step = secret ? this.stepOf(secret, typed) : undefined
        if (step !== undefined && step > state.lastStep) {
          state.lastStep = step
          used = 'app'
          return true
        }
        const index = typed.length === 10 ? state.recovery.findIndex(stored => timingSafeEqual(Buffer.from(stored, 'hex'), Buffer.from(hash(typed), 'hex'))) : -1
        if (index < 0) return false
        state.recovery.splice(index, 1)
        used = 'recovery'
        return true
      })
      await this.settings.setSetting(stateKey(userId), JSON.stringify(state))
      return used!
    })
  }

  /**
   * New recovery codes (the old ones stop working), after a good code from the app, a recovery
   * code, or the account's password (a person with passkeys only has no code to give).
   */
  async renewRecoveryCodes(userId: string, proof: { code: string } | { password: string }): Promise<{ recoveryCodes: string[] }> {
    if ('code' in proof) await this.check(userId, proof.code)
    else await this.confirmPassword(userId, proof.password, 'That is not your password; your recovery codes are unchanged.')
    return this.locks.run(stateKey(userId), async () => {
      const state = await this.keptState(userId)
      if (!state) throw new AuthError('two-step-off', 'Two-step sign-in is not on for this account.')
      const codes = recoveryCodes()
      await this.settings.setSetting(stateKey(userId), JSON.stringify({ ...state, recovery: storedCodes(codes) }))
      return { recoveryCodes: codes }
    })
  }

  /**
   * Turns the authenticator app off, with the account's password and a code (from the app or a
   * recovery code). With passkeys left, two-step sign-in stays on with them (and the recovery
   * codes); otherwise it is off.
   */
  async disable(userId: string, password: string, code: string): Promise<void> {
    await this.confirmPassword(userId, password, 'That is not your password; two-step sign-in stays on.')
    await this.check(userId, code)
    await this.locks.run(stateKey(userId), async () => {
      const state = await this.state(userId)
      const { secret: _dropped, ...rest } = state ?? { recovery: [], lastStep: 0, enabledAt: 0 }
      await this.settings.setSetting(stateKey(userId), await this.passkeysOf(userId) > 0 ? JSON.stringify(rest) : 'null')
    })
  }

  /** Forgets an account's two-step sign-in, its passkeys too (the account was deleted, or an admin reset its password). */
  deleteUser(userId: string): Promise<void> {
    return this.settings.deleteSettings(`two-step:${userId}:`)
  }

  /** The time step `code` is good for (this one or one either side, for clocks a little apart), or undefined. */
  private stepOf(secret: string, code: string): number | undefined {
    if (!/^\d{6}$/.test(code)) return undefined
    const now = this.now()
    const delta = totp(secret, 'x', this.issuer).validate({ token: code, timestamp: now, window: 1 })
    return delta === null ? undefined : Math.floor(now / 1000 / PERIOD_S) + delta
  }

  /** Runs `good`; a false answer counts against the account and is refused (401, or 429 past the limit). */
  private async countWrong(userId: string, good: () => Promise<boolean>): Promise<void> {
    const refused = await this.wrongCodes.get(userId)
    if (refused && refused.remainingPoints <= 0) throw this.tooMany(refused.msBeforeNext)
    if (await good()) {
      // A right code forgets the wrong ones before it (as a sign-in does).
      await this.wrongCodes.delete(userId).catch(() => {})
      return
    }
    try {
      await this.wrongCodes.consume(userId)
    } catch (rejection) {
      throw this.tooMany((rejection as { msBeforeNext?: number }).msBeforeNext ?? WRONG_CODE_WINDOW_S * 1000)
    }
    throw new AuthError('bad-code', 'That code is not right (or was already used). Type the 6 digits your app shows now, or a recovery code.')
  }

  private tooMany(ms: number): AuthError {
    const seconds = Math.max(1, Math.ceil(ms / 1000))
    return new AuthError('too-many-attempts', `Too many wrong codes for this account. Try again in ${seconds} s.`, seconds)
  }
}
