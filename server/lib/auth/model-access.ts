/**
 * Which models each role may use (`auth.models` in the runtime config: comma-separated ids, or
 * `*` for any). A request naming another model is refused with 403 naming the model and the ones
 * on offer; the model list shows a role only what it may pick.
 */
import type { Role } from '../../../shared/types/account'
import type { WorkflowDefinition } from '../../../shared/types/workflow'
import { AuthError } from './auth-errors'

/** The models each role may use, as configured. */
export type RoleModels = Record<Role, string>

function allowedList(models: RoleModels, role: Role): '*' | string[] {
  const value = models[role].trim()
  return value === '*' ? '*' : value.split(',').map(item => item.trim()).filter(Boolean)
}

/** Whether `role` may use `model`. */
export function isModelAllowed(models: RoleModels, role: Role, model: string): boolean {
  const allowed = allowedList(models, role)
  return allowed === '*' || allowed.includes(model)
}

/** Throws 403 (`model-not-allowed`) naming the first of `wanted` that `role` may not use. */
export function assertModelsAllowed(models: RoleModels, role: Role, wanted: readonly string[]): void {
  const refused = wanted.find(model => !isModelAllowed(models, role, model))
  if (refused === undefined) return
  const allowed = allowedList(models, role) as string[]
  const who = role === 'guest' ? 'Guests' : role === 'user' ? 'Users' : 'Admins'
  throw new AuthError('model-not-allowed', `${who} may not use the model "${refused}" on this server. Choose one of: ${allowed.join(', ')}${role === 'guest' ? ', or sign in for more' : ''}.`)
}

/** Every model a workflow may call: each agent's and model-mode router's, or the workflow's default. */
export function workflowModels(definition: WorkflowDefinition): string[] {
  const models = new Set<string>()
  for (const node of definition.nodes) {
    if (node.kind === 'agent' || (node.kind === 'router' && node.mode === 'model')) models.add(node.model ?? definition.defaultModel)
  }
  return [...models]
}
