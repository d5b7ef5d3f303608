// Node's `fs` with the `globSync` of Node 22 (used by the conformance suite's tier-check only; see node20-hooks.mjs).
import fs from 'node:fs'

export * from 'node:fs'
export default fs
export function globSync() {
  throw new Error('fs.globSync needs Node 22; the conformance scenarios do not use it')
}
