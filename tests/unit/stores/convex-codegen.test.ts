import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'

describe('convex/_generated', () => {
  it('is what `npm run convex:codegen` produces from the current convex/ functions (offline)', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['scripts/convex-codegen.mjs', '--check'])
    expect(stdout).toContain('up to date')
  })
})
