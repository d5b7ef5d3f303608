/** Why an auth request was refused, each answered with its status and words a person can act on. */
import { DomainError, type HttpAnswer } from '../domain-error'

/** What went wrong, and the HTTP status each answers with. */
export const AUTH_REFUSALS = {
  'not-signed-in': 401,
  'session-ended': 401,
  'bad-credentials': 401,
  'bad-token': 401,
  'bad-code': 401,
  'bad-passkey': 401,
  'disabled': 403,
  'wrong-password': 403,
  'setup-code': 403,
  'signup-closed': 403,
  'bad-invite': 403,
  'not-admin': 403,
  'not-allowed': 403,
  'two-step-required': 403,
  'passwords-off': 403,
  'already-set-up': 409,
  'name-taken': 409,
  'last-admin': 409,
  'too-many-tokens': 409,
  'too-many-groups': 409,
  'unknown-group': 400,
  'two-step-setup': 400,
  'two-step-on': 409,
  'two-step-off': 409,
  'passkey-setup': 400,
  'passkey-site': 409,
  'too-many-passkeys': 409,
  'unknown-passkey': 404,
  'too-many-attempts': 429,
} as const

/** A refusal's kind. */
export type AuthRefusal = keyof typeof AUTH_REFUSALS

/** Raised by the account service and session checks; the error handler answers with its status. */
export class AuthError extends DomainError {
  override name = 'AuthError'
  constructor(readonly refusal: AuthRefusal, message: string, readonly retryAfterSeconds?: number) {
    super(message)
  }

  get statusCode(): number {
    return AUTH_REFUSALS[this.refusal]
  }

  httpAnswer(): HttpAnswer {
    const statusMessages: Record<number, string> = { 400: 'Bad request', 401: 'Sign-in required', 403: 'Not allowed', 404: 'Not found', 409: 'Conflict', 429: 'Too many attempts' }
    const i18n = { key: `auth.${this.refusal.replace(/-(\w)/g, (_, letter: string) => letter.toUpperCase())}`, params: this.retryAfterSeconds !== undefined ? { seconds: this.retryAfterSeconds } : undefined }
    return { statusCode: this.statusCode, statusMessage: statusMessages[this.statusCode] ?? 'Refused', message: this.message, i18n, data: { reason: this.refusal }, retryAfterSeconds: this.retryAfterSeconds, ...(this.refusal === 'too-many-attempts' ? { refusedBy: 'auth_attempts' } : {}) }
  }

  static isInstance(error: unknown): error is AuthError {
    return error instanceof Error && error.name === 'AuthError'
  }
}
