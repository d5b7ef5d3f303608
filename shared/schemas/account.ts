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
