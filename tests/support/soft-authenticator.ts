/**
 * A WebAuthn authenticator in software, for tests that talk to the server without a browser: it
 * makes real P-256 credentials and signs real assertions (authenticator data, client data, DER
 * ECDSA signatures as a platform authenticator sends them), so the server's checks run on the
 * genuine article. Browser tests use Chromium's virtual authenticator instead.
 */
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto'
import { isoBase64URL, isoCBOR } from '@simplewebauthn/server/helpers'
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/types'

const FLAG_PRESENT = 0x01
const FLAG_VERIFIED = 0x04
const FLAG_ATTESTED = 0x40

interface SoftCredential {
  id: string
  rpId: string
  privateKey: KeyObject
  userHandle: string
  counter: number
}

const sha256 = (data: Uint8Array | string) => createHash('sha256').update(data).digest()
const b64 = (data: Uint8Array | string) => isoBase64URL.fromBuffer(typeof data === 'string' ? new TextEncoder().encode(data) : data)

export interface SoftAuthenticatorOptions {
  /** Whether the device checks its owner (a PIN, a fingerprint); default yes. */
  verifiesUser?: boolean
  /** Whether it counts its signatures (most passkeys answer 0 every time); default yes. */
  counts?: boolean
}

export class SoftAuthenticator {
  readonly credentials: SoftCredential[] = []

  constructor(private readonly origin: string, private readonly options: SoftAuthenticatorOptions = {}) {}

  private flags(extra = 0): number {
    return FLAG_PRESENT | (this.options.verifiesUser === false ? 0 : FLAG_VERIFIED) | extra
  }

  /** `navigator.credentials.create`: a new credential for the options' site and user. */
  create(options: PublicKeyCredentialCreationOptionsJSON, attestation: { fmt?: string, attStmt?: Map<string, unknown> } = {}): RegistrationResponseJSON {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    const jwk = publicKey.export({ format: 'jwk' })
    const cose = new Map<number, number | Uint8Array>([[1, 2], [3, -7], [-1, 1], [-2, isoBase64URL.toBuffer(jwk.x!)], [-3, isoBase64URL.toBuffer(jwk.y!)]])
    const rawId = randomBytes(16)
    const rpId = options.rp.id!
    const authData = Buffer.concat([
      sha256(rpId), Buffer.from([this.flags(FLAG_ATTESTED)]), Buffer.alloc(4),
      Buffer.alloc(16), Buffer.from([0, rawId.length]), rawId, Buffer.from(isoCBOR.encode(cose)),
    ])
    const fields = new Map<string, unknown>([['fmt', attestation.fmt ?? 'none'], ['attStmt', attestation.attStmt ?? new Map()], ['authData', new Uint8Array(authData)]])
    const attestationObject = isoCBOR.encode(fields as Parameters<typeof isoCBOR.encode>[0])
    const id = b64(rawId)
    this.credentials.push({ id, rpId, privateKey, userHandle: options.user.id, counter: 0 })
    return {
      id,
      rawId: id,
      type: 'public-key',
      response: {
        clientDataJSON: b64(JSON.stringify({ type: 'webauthn.create', challenge: options.challenge, origin: this.origin, crossOrigin: false })),
        attestationObject: b64(attestationObject),
        transports: ['internal'],
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    }
  }

  /** `navigator.credentials.get`: an assertion by one of the allowed credentials (any of the site's when none are named). */
  get(options: PublicKeyCredentialRequestOptionsJSON, which?: string): AuthenticationResponseJSON {
    const allowed = options.allowCredentials?.map(item => item.id) ?? []
    const credential = this.credentials.find(item => item.rpId === options.rpId && (which ? item.id === which : allowed.length === 0 || allowed.includes(item.id)))
    if (!credential) throw new Error('NotAllowedError: no credential for this site')
    if (this.options.counts !== false) credential.counter += 1
    const counter = Buffer.alloc(4)
    counter.writeUInt32BE(this.options.counts === false ? 0 : credential.counter)
    const authData = Buffer.concat([sha256(credential.rpId), Buffer.from([this.flags()]), counter])
    const clientDataJSON = JSON.stringify({ type: 'webauthn.get', challenge: options.challenge, origin: this.origin, crossOrigin: false })
    const signature = sign('sha256', Buffer.concat([authData, sha256(clientDataJSON)]), credential.privateKey)
    return {
      id: credential.id,
      rawId: credential.id,
      type: 'public-key',
      response: { clientDataJSON: b64(clientDataJSON), authenticatorData: b64(authData), signature: b64(signature), userHandle: credential.userHandle },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    }
  }
}
