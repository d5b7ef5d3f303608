/**
 * Which models each role may use (its `models` limit: comma-separated ids, or `*` for any). A
 * request naming another model is refused with 403 naming the model and the ones on offer; the
 * model list shows a role only what it may pick.
 */
import type { Role } from '../../../shared/types/account'
import { DomainError, type HttpAnswer } from '../domain-error'

function allowedList(models: string): '*' | string[] {
  const value = models.trim()
  return value === '*' ? '*' : value.split(',').map(item => item.trim()).filter(Boolean)
}

/** Whether a role whose allowlist is `models` may use `model`. */
export function isModelAllowed(models: string, model: string): boolean {
  const allowed = allowedList(models)
  return allowed === '*' || allowed.includes(model)
}

/** A model the person's role may not use: 403, `reason: 'model-not-allowed'`. */
export class ModelNotAllowedError extends DomainError {
  override name = 'ModelNotAllowedError'
  readonly refusal = 'model-not-allowed'

  httpAnswer(): HttpAnswer {
    return { statusCode: 403, statusMessage: 'Not allowed', message: this.message, data: { reason: this.refusal } }
  }
}

/** Throws 403 (`model-not-allowed`) naming the first of `wanted` that `role` (allowed `models`) may not use. */
export function assertModelsAllowed(models: string, role: Role, wanted: Iterable<string>): void {
  const refused = [...wanted].find(model => !isModelAllowed(models, model))
  if (refused === undefined) return
  const allowed = allowedList(models) as string[]
  const who = role === 'guest' ? 'Guests' : role === 'user' ? 'Users' : 'Admins'
  throw new ModelNotAllowedError(`${who} may not use the model "${refused}" on this server. Choose one of: ${allowed.join(', ')}${role === 'guest' ? ', or sign in for more' : ''}.`)
}
