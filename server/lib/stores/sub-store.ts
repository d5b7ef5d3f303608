/** How wrappers of a whole store (busy retries, metrics, traces) find the ports it holds inside. */

/** A plain object of methods inside a store (a port of its own, such as `jobs.notifications`). */
export function isSubStore(value: unknown): value is object {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const prototype = Object.getPrototypeOf(value)
  return (prototype === Object.prototype || prototype === null) && Object.values(value).some(entry => typeof entry === 'function')
}
