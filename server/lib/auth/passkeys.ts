/**
 * Passkeys (WebAuthn, through `@simplewebauthn/server`) for accounts with a password: each signs
 * in alone (a passkey with user verification is two factors: the device and its PIN or
 * fingerprint), or is the second step after the password, in place of a code from an
 * authenticator app (two-step.ts keeps the recovery codes both share).
 *
 * Kept per account in the settings store under the account's two-step prefix (so an admin's
 * password reset and a deleted account remove them): each passkey's public key, signature counter
 * and name, and the challenges it answered lately (an answer is good once, on every instance:
 * checked and written under the store's lock). A setup's challenge is kept for five minutes.
 *
 * Attestation is not asked for: a response that carries certificates anyway is refused before any
 * is read (checking a chain could send this server to addresses the certificates name).
 * WebAuthn binds a passkey to the site's name: it needs a domain name (`localhost` works), never
 * an IP address, and a secure context (HTTPS, or localhost).
 */
import { createHash } from 'node:crypto'
import { isIP } from 'node:net'
import type {
  AuthenticationResponseJSON,
  AuthenticatorTransportFuture,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/types'
import type { PasskeySummary } from '../../../shared/types/account'
import type { StoredAccount } from '../stores/accounts/account-store'
import type { SettingsStore } from '../stores/settings/settings-store'
import { readJsonSetting } from '../stores/settings/settings-store'
import { SettingLocks } from '../stores/settings/setting-locks'
import { AuthError } from './auth-errors'

/**
 * WebAuthn's checks, loaded with the first passkey request rather than at every start (they bring
 * an ASN.1 and X.509 stack: about 50 ms of a server's start-up).
 */
const webAuthn = () => import('@simplewebauthn/server')
const webAuthnHelpers = () => import('@simplewebauthn/server/helpers')

/** Passkeys one account may have. */
export const MAX_PASSKEYS = 10
/** How long a ceremony (a setup, a sign-in) may take from its challenge to its answer. */
export const PASSKEY_CEREMONY_MS = 5 * 60_000
/** Answered challenges kept per account, against a replayed answer. */
const SPENT_KEPT = 32

/** Where the app is served: the passkey's relying party is its host name, answers must come from its origin. */
export interface PasskeySite {
  rpId: string
  origin: string
}

interface StoredPasskey {
  /** The credential id (base64url). */
  id: string
  /** The COSE public key (base64url). */
  publicKey: string
  counter: number
  transports?: AuthenticatorTransportFuture[]
  name: string
  createdAt: number
  lastUsedAt?: number
  synced: boolean
}

interface AccountPasskeys {
  keys: StoredPasskey[]
  /** SHA-256 of challenges answered, with when each stops mattering. */
  spent: Array<[string, number]>
}

interface PendingRegistration {
  challenge: string
  expiresAt: number
}

const listKey = (userId: string) => `two-step:${userId}:passkeys`
const setupKey = (userId: string) => `two-step:${userId}:passkey-setup`
const digest = (value: string) => createHash('sha256').update(value).digest('hex')
const summary = (key: StoredPasskey): PasskeySummary => ({ id: key.id, name: key.name, createdAt: key.createdAt, lastUsedAt: key.lastUsedAt, synced: key.synced })

/** The site a passkey can be bound to, from the origin the app is served at; refused for an IP address. */
export function passkeySite(appOrigin: string): PasskeySite {
  const url = new URL(appOrigin)
  const host = url.hostname.replace(/^\[|\]$/g, '')
  if (isIP(host)) throw new AuthError('passkey-site', 'Passkeys need the app opened at a domain name (such as localhost, or the name in NUXT_SITE_URL), not an IP address.')
  return { rpId: host, origin: url.origin }
}

const tooManyPasskeys = () => new AuthError('too-many-passkeys', `An account may have ${MAX_PASSKEYS} passkeys. Remove one you no longer use first.`)
const unknownPasskey = () => new AuthError('unknown-passkey', 'There is no such passkey on your account (it may have been removed).')

/** Any failure of the WebAuthn checks, as one refusal a person can act on. */
function refusedPasskey(reason: string): AuthError {
  return new AuthError('bad-passkey', `That passkey was not accepted (${reason.slice(0, 200)}). Try again, or use another way to sign in.`)
}

export class Passkeys {
  private readonly locks: SettingLocks
  private readonly now: () => number

  constructor(
    private readonly settings: Pick<SettingsStore, 'getSetting' | 'setSetting' | 'tryLock' | 'unlock'>,
    private readonly options: {
      /** The name an authenticator shows for this site. */
      rpName: string
      /** Refuses (403, `wrong` as its words) unless `password` is the account's. */
      confirmPassword: (userId: string, password: string, wrong: string) => Promise<void>
      /** Makes recovery codes when the account had no second step (answered to show once), before the passkey is stored. */
      adding: (userId: string) => Promise<string[] | undefined>
      /** After a passkey is removed (with none and no app left, two-step sign-in is off). */
      removed: (userId: string) => Promise<void>
      /** The account a passkey signs in, or why it may not (disabled, passwords off). */
      signInAccount: (userId: string) => Promise<StoredAccount>
      now?: () => number
    },
  ) {
    this.now = options.now ?? (() => Date.now())
    this.locks = new SettingLocks(settings, crypto.randomUUID(), { ttlMs: 10_000, attempts: 80, now: this.now, busyMessage: 'Passkeys are being changed elsewhere; try again in a moment.' })
  }

  private async stored(userId: string): Promise<AccountPasskeys> {
    return (await readJsonSetting<AccountPasskeys | null>(this.settings, listKey(userId), null)) ?? { keys: [], spent: [] }
  }

  async list(userId: string): Promise<PasskeySummary[]> {
    return (await this.stored(userId)).keys.map(summary)
  }

  async count(userId: string): Promise<number> {
    return (await this.stored(userId)).keys.length
  }

  /** The options for the browser's `navigator.credentials.create`, for a new passkey of `userId` (its answer within five minutes). */
  async registrationOptions(userId: string, accountName: string, site: PasskeySite): Promise<PublicKeyCredentialCreationOptionsJSON> {
    const { keys } = await this.stored(userId)
    if (keys.length >= MAX_PASSKEYS) throw tooManyPasskeys()
    const { generateRegistrationOptions } = await webAuthn()
    const options = await generateRegistrationOptions({
      rpName: this.options.rpName,
      rpID: site.rpId,
      userName: accountName,
      userDisplayName: accountName,
      // The account's id is the user handle: a passkey found by the browser alone names its account.
      userID: new TextEncoder().encode(userId),
      attestationType: 'none',
      excludeCredentials: keys.map(key => ({ id: key.id, transports: key.transports })),
      authenticatorSelection: { residentKey: 'preferred', userVerification: 'preferred' },
      timeout: PASSKEY_CEREMONY_MS,
    })
    const pending: PendingRegistration = { challenge: options.challenge, expiresAt: this.now() + PASSKEY_CEREMONY_MS }
    await this.settings.setSetting(setupKey(userId), JSON.stringify(pending))
    return options
  }

  /** Checks the browser's answer to `registrationOptions` and keeps the passkey; recovery codes come with the account's first second step. */
  async register(userId: string, response: RegistrationResponseJSON, name: string | undefined, site: PasskeySite): Promise<{ passkey: PasskeySummary, recoveryCodes?: string[] }> {
    const pending = await readJsonSetting<PendingRegistration | null>(this.settings, setupKey(userId), null)
    if (!pending || pending.expiresAt <= this.now()) throw new AuthError('passkey-setup', 'Add the passkey again: the request is older than five minutes, or was never started.')
    // Used once, whatever the answer.
    await this.settings.setSetting(setupKey(userId), 'null')
    const [{ verifyRegistrationResponse }, { decodeAttestationObject, isoBase64URL }] = await Promise.all([webAuthn(), webAuthnHelpers()])
    let attestation: ReturnType<typeof decodeAttestationObject>
    try {
      attestation = decodeAttestationObject(isoBase64URL.toBuffer(response.response.attestationObject))
    } catch {
      throw refusedPasskey('its answer could not be read')
    }
    if (attestation.get('attStmt').get('x5c') || !['none', 'packed'].includes(attestation.get('fmt'))) throw refusedPasskey('it sent an attestation this server does not ask for')
    let verified: Awaited<ReturnType<typeof verifyRegistrationResponse>>
    try {
      verified = await verifyRegistrationResponse({ response, expectedChallenge: pending.challenge, expectedOrigin: site.origin, expectedRPID: site.rpId, requireUserVerification: false })
    } catch (error) {
      throw refusedPasskey((error as Error).message)
    }
    if (!verified.verified || !verified.registrationInfo) throw refusedPasskey('it could not be verified')
    const { credential, credentialBackedUp } = verified.registrationInfo
    const recoveryCodes = await this.options.adding(userId)
    const passkey = await this.locks.run(listKey(userId), async () => {
      const list = await this.stored(userId)
      if (list.keys.some(key => key.id === credential.id)) throw new AuthError('already-set-up', 'That passkey is already added to your account.')
      if (list.keys.length >= MAX_PASSKEYS) throw tooManyPasskeys()
      const key: StoredPasskey = {
        id: credential.id,
        publicKey: isoBase64URL.fromBuffer(credential.publicKey),
        counter: credential.counter,
        transports: credential.transports ?? response.response.transports,
        name: name?.trim() || `Passkey ${list.keys.length + 1}`,
        createdAt: this.now(),
        synced: credentialBackedUp,
      }
      list.keys.push(key)
      await this.settings.setSetting(listKey(userId), JSON.stringify(list))
      return summary(key)
    })
    return recoveryCodes ? { passkey, recoveryCodes } : { passkey }
  }

  async rename(userId: string, id: string, name: string): Promise<PasskeySummary> {
    return this.locks.run(listKey(userId), async () => {
      const list = await this.stored(userId)
      const key = list.keys.find(item => item.id === id)
      if (!key) throw unknownPasskey()
      key.name = name.trim().slice(0, 64) || key.name
      await this.settings.setSetting(listKey(userId), JSON.stringify(list))
      return summary(key)
    })
  }

  /** Removes a passkey, with the account's password; the last second step gone turns two-step sign-in off. */
  async remove(userId: string, id: string, password: string): Promise<void> {
    await this.options.confirmPassword(userId, password, 'That is not your password; the passkey stays.')
    await this.locks.run(listKey(userId), async () => {
      const list = await this.stored(userId)
      const kept = list.keys.filter(item => item.id !== id)
      if (kept.length === list.keys.length) throw unknownPasskey()
      await this.settings.setSetting(listKey(userId), JSON.stringify({ ...list, keys: kept }))
    })
    await this.options.removed(userId)
  }

  /**
   * The options for `navigator.credentials.get`: any passkey of this site the browser holds (a
   * sign-in by passkey alone), or one of `userId`'s (the second step after their password).
   */
  async signInOptions(site: PasskeySite, userId?: string): Promise<PublicKeyCredentialRequestOptionsJSON> {
    const keys = userId ? (await this.stored(userId)).keys : []
    if (userId && keys.length === 0) throw new AuthError('unknown-passkey', 'This account has no passkey. Use the code from your authenticator app, or a recovery code.')
    const { generateAuthenticationOptions } = await webAuthn()
    return generateAuthenticationOptions({
      rpID: site.rpId,
      allowCredentials: keys.map(key => ({ id: key.id, transports: key.transports })),
      // Alone, the passkey is both factors: the device must have checked its owner (PIN, fingerprint).
      userVerification: userId ? 'preferred' : 'required',
      timeout: PASSKEY_CEREMONY_MS,
    })
  }

  /**
   * Checks the browser's answer to `signInOptions` (`challenge` as issued): answers the account it
   * signs in. As the second step the passkey must be `userId`'s; alone it names its account and
   * must have verified its owner. Good once; a counter that went back (a cloned key) is refused.
   */
  async signIn(site: PasskeySite, challenge: string, response: AuthenticationResponseJSON, userId?: string): Promise<StoredAccount> {
    const owner = await this.verifySignIn(site, challenge, response, userId)
    return this.options.signInAccount(owner)
  }

  private async verifySignIn(site: PasskeySite, challenge: string, response: AuthenticationResponseJSON, userId?: string): Promise<string> {
    const [{ verifyAuthenticationResponse }, { isoBase64URL }] = await Promise.all([webAuthn(), webAuthnHelpers()])
    const handle = response.response.userHandle ? new TextDecoder().decode(isoBase64URL.toBuffer(response.response.userHandle)) : undefined
    const owner = userId ?? handle
    if (!owner || (userId && handle && handle !== userId)) throw refusedPasskey(userId ? 'it belongs to another account' : 'it does not name an account here')
    return this.locks.run(listKey(owner), async () => {
      const list = await this.stored(owner)
      const key = list.keys.find(item => item.id === response.id)
      if (!key) throw refusedPasskey('it is not one of this server\'s passkeys, or it was removed')
      const spent = digest(challenge)
      if (list.spent.some(([seen]) => seen === spent)) throw refusedPasskey('that answer was already used')
      let verified: Awaited<ReturnType<typeof verifyAuthenticationResponse>>
      try {
        verified = await verifyAuthenticationResponse({
          response,
          expectedChallenge: challenge,
          expectedOrigin: site.origin,
          expectedRPID: site.rpId,
          credential: { id: key.id, publicKey: isoBase64URL.toBuffer(key.publicKey), counter: key.counter, transports: key.transports },
          requireUserVerification: !userId,
        })
      } catch (error) {
        throw refusedPasskey((error as Error).message)
      }
      if (!verified.verified) throw refusedPasskey('its signature did not match')
      const now = this.now()
      key.counter = verified.authenticationInfo.newCounter
      key.lastUsedAt = now
      list.spent = [...list.spent.filter(([, until]) => until > now), [spent, now + PASSKEY_CEREMONY_MS] as [string, number]].slice(-SPENT_KEPT)
      await this.settings.setSetting(listKey(owner), JSON.stringify(list))
      return owner
    })
  }
}
