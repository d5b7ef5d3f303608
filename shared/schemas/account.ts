/** The account forms' fields, validated the same way by the sign-in page and the server. */
import { z } from 'zod'
import { ACCOUNT_LIMITS } from '../types/account'

/** A display and sign-in name: printable, no leading or trailing spaces kept. */
export const accountName = z.string()
  .trim()
  .min(ACCOUNT_LIMITS.nameMin, `must be at least ${ACCOUNT_LIMITS.nameMin} characters`)
  .max(ACCOUNT_LIMITS.nameMax, `must be at most ${ACCOUNT_LIMITS.nameMax} characters`)
  .refine(value => !/[\p{Cc}\p{Cf}]/u.test(value), 'must not contain control or formatting characters')

/** A password: long enough to resist guessing, short enough to hash cheaply. */
export const accountPassword = z.string()
  .min(ACCOUNT_LIMITS.passwordMin, `must be at least ${ACCOUNT_LIMITS.passwordMin} characters`)
  .max(ACCOUNT_LIMITS.passwordMax, `must be at most ${ACCOUNT_LIMITS.passwordMax} characters`)

/** Sign-in: the name and password (a password of any length is checked, never echoed). */
export const signInBody = z.object({
  name: z.string().trim().min(1, 'is required').max(ACCOUNT_LIMITS.nameMax),
  password: z.string().min(1, 'is required').max(ACCOUNT_LIMITS.passwordMax),
}).strict()

/** Sign-up (and first-run admin creation): a new name and password, and an invite code when sign-up needs one. */
export const signUpBody = z.object({
  name: accountName,
  password: accountPassword,
  invite: z.string().trim().max(100).optional(),
  /** The one-time code the server printed at start-up, to create the first account from another machine. */
  setupCode: z.string().trim().max(40).optional(),
  /** Signing up from a guest session: the new account keeps the guest's conversations, workflows and jobs. */
  keepGuestData: z.boolean().optional(),
}).strict()

/**
 * What a browser's WebAuthn call answers (`@simplewebauthn/browser`'s JSON form), bounded before
 * anything reads it: base64url fields only, each at most 64 kB (an attestation with its
 * certificates fits), the client's extension results as a small object.
 */
const base64url = (max: number) => z.string().max(max).regex(/^[A-Za-z0-9_-]*$/, 'must be base64url')
const webAuthnBase = {
  id: base64url(1_400).min(1),
  rawId: base64url(1_400).min(1),
  type: z.literal('public-key'),
  clientExtensionResults: z.record(z.string().max(64), z.unknown()).refine(value => Object.keys(value).length <= 16, 'has too many entries'),
  authenticatorAttachment: z.enum(['platform', 'cross-platform']).optional(),
}
export const passkeyRegistrationBody = z.object({
  name: z.string().trim().max(64).optional(),
  response: z.object({
    ...webAuthnBase,
    response: z.object({
      clientDataJSON: base64url(8_000),
      attestationObject: base64url(65_536),
      authenticatorData: base64url(65_536).optional(),
      transports: z.array(z.enum(['ble', 'cable', 'hybrid', 'internal', 'nfc', 'smart-card', 'usb'])).max(8).optional(),
      publicKeyAlgorithm: z.number().int().optional(),
      publicKey: base64url(8_000).optional(),
    }),
  }),
}).strict()
export const passkeySignInBody = z.object({
  response: z.object({
    ...webAuthnBase,
    response: z.object({
      clientDataJSON: base64url(8_000),
      authenticatorData: base64url(8_000),
      signature: base64url(2_000),
      userHandle: base64url(200).optional(),
    }),
  }),
}).strict()
