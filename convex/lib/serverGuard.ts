/**
 * Only the Nitro server may call this deployment's functions: every public function takes the
 * shared secret (`OR3_SERVER_SECRET` on the deployment, `NUXT_CONVEX_SERVER_SECRET` in Nitro).
 * A browser holding the deployment URL alone can read and change nothing.
 */
import { v, type ObjectType, type PropertyValidators } from 'convex/values'
import { action, mutation, query, type ActionCtx, type MutationCtx, type QueryCtx } from '../_generated/server'

function sameSecret(given: string, expected: string): boolean {
  // Constant-time for equal lengths; length differences leak only the length.
  if (given.length !== expected.length) return false
  let difference = 0
  for (let index = 0; index < given.length; index++) difference |= given.charCodeAt(index) ^ expected.charCodeAt(index)
  return difference === 0
}

/** Throws unless `secret` is the deployment's server secret. */
export function assertServerSecret(secret: string): void {
  const expected = process.env.OR3_SERVER_SECRET
  if (!expected || expected.length < 32) {
    throw new Error('OR3_SERVER_SECRET is not set on this deployment (32+ characters); set it with `npx convex env set OR3_SERVER_SECRET …`.')
  }
  if (!sameSecret(secret, expected)) throw new Error('Unauthorized: this function may only be called by the OR3 server.')
}

/** A function's definition with the server secret added to its arguments and checked before its handler runs. */
function withServerSecret<Ctx, Args extends PropertyValidators, Result>(definition: { args: Args, handler: (ctx: Ctx, args: ObjectType<Args>) => Promise<Result> }) {
  return {
    args: { ...definition.args, secret: v.string() },
    handler: async (ctx: Ctx, { secret, ...args }: any): Promise<Result> => {
      assertServerSecret(secret)
      return definition.handler(ctx, args as ObjectType<Args>)
    },
  }
}

/** A public query callable only with the server secret. */
export function serverQuery<Args extends PropertyValidators, Result>(definition: { args: Args, handler: (ctx: QueryCtx, args: ObjectType<Args>) => Promise<Result> }) {
  return query(withServerSecret(definition))
}

/** A public mutation callable only with the server secret. */
export function serverMutation<Args extends PropertyValidators, Result>(definition: { args: Args, handler: (ctx: MutationCtx, args: ObjectType<Args>) => Promise<Result> }) {
  return mutation(withServerSecret(definition))
}

/** A public action callable only with the server secret (for what only an action may do: a vector search). */
export function serverAction<Args extends PropertyValidators, Result>(definition: { args: Args, handler: (ctx: ActionCtx, args: ObjectType<Args>) => Promise<Result> }) {
  return action(withServerSecret(definition))
}
