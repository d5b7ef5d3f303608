/**
 * Lets the conformance suite's command line run on Node 20. Its bundle imports `globSync` from
 * `fs` (Node 22+), which only its `tier-check` command calls; on Node 20 that named import fails
 * before any scenario runs. Registered with `node --import`, this hook hands the suite an `fs`
 * that has every export of Node's own plus a `globSync` that says it is missing. Node 22 and later
 * need nothing: there the hook steps aside.
 */
import { register } from 'node:module'
import fs from 'node:fs'

if (typeof fs.globSync !== 'function') {
  const shim = new URL('./fs-with-glob-sync.mjs', import.meta.url).href
  const hooks = `export async function resolve(specifier, context, next) {
    if ((specifier === 'fs' || specifier === 'node:fs') && context.parentURL?.includes('/@modelcontextprotocol/conformance/')) return { url: ${JSON.stringify(shim)}, shortCircuit: true }
    return next(specifier, context)
  }`
  register(`data:text/javascript,${encodeURIComponent(hooks)}`)
}
