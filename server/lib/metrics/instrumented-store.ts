/**
 * A store whose every call is watched: `watch(store, operation)` is told when a method is called
 * and, through what it returns, when its promise settled and whether it failed. Metrics time the
 * store's operations with it (`store_operation_duration_seconds`), tracing makes a span of each.
 * Operations are the store's own method names, so the labels they make are a fixed set.
 */
import { isSubStore } from '../stores/sub-store'

/** Told when a store call begins; returns what to call when it ends. */
export type StoreCallWatcher = (store: string, operation: string) => (failed: boolean) => void

/**
 * `store` with each of its methods' calls reported to `watch` (`name` says which store it is); a
 * sub-store's (a plain object of methods, such as the job store's `inputRequests`) as `<key>.<method>`.
 */
export function instrumentedStore<T extends object>(store: T, name: string, watch: StoreCallWatcher, prefix = ''): T {
  const wrapped = new Map<PropertyKey, unknown>()
  return new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver)
      if (typeof property === 'string' && isSubStore(value)) {
        let sub = wrapped.get(property)
        if (!sub) wrapped.set(property, sub = instrumentedStore(value, name, watch, `${prefix}${property}.`))
        return sub
      }
      if (typeof value !== 'function' || typeof property !== 'string' || property === 'constructor') return value
      let method = wrapped.get(property)
      if (!method) {
        const original = value as (...args: unknown[]) => unknown
        method = function (this: unknown, ...args: unknown[]) {
          const ended = watch(name, prefix + property)
          let result: unknown
          try {
            // Called on the store itself, so classes' private fields keep working.
            result = original.apply(target, args)
          } catch (error) {
            ended(true)
            throw error
          }
          if (!isThenable(result)) {
            ended(false)
            return result
          }
          return result.then(
            (settled) => {
              ended(false)
              return settled
            },
            (error: unknown) => {
              ended(true)
              throw error
            },
          )
        }
        wrapped.set(property, method)
      }
      return method
    },
  })
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === 'function'
}

/** One watcher that tells each of `watchers`. */
export function allWatchers(watchers: StoreCallWatcher[]): StoreCallWatcher {
  if (watchers.length === 1) return watchers[0]!
  return (store, operation) => {
    const ends = watchers.map(watch => watch(store, operation))
    return failed => ends.forEach(end => end(failed))
  }
}

/** `stores` with every call reported to `watch`, by store (each role of the account backend by its own name). */
/** The stores `watchStores` watches (the app's, stores/index.ts). */
type WatchedStores = Record<'jobs' | 'threads' | 'workflows' | 'workflowRuns' | 'accounts' | 'tokens' | 'identities' | 'settings' | 'usage', object>

export function watchStores<T extends WatchedStores>(stores: T, watch: StoreCallWatcher): T {
  return {
    ...stores,
    jobs: instrumentedStore(stores.jobs, 'jobs', watch),
    threads: instrumentedStore(stores.threads, 'threads', watch),
    workflows: instrumentedStore(stores.workflows, 'workflows', watch),
    workflowRuns: instrumentedStore(stores.workflowRuns, 'workflow_runs', watch),
    accounts: instrumentedStore(stores.accounts, 'accounts', watch),
    tokens: instrumentedStore(stores.tokens, 'tokens', watch),
    identities: instrumentedStore(stores.identities, 'identities', watch),
    settings: instrumentedStore(stores.settings, 'settings', watch),
    usage: instrumentedStore(stores.usage, 'usage', watch),
  }
}
