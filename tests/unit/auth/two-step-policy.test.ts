/** Who the admin's two-step requirement holds: by role, only password accounts without it, read again when it changes. */
import { describe, expect, it } from 'vitest'
import { TwoStepPolicy } from '../../../server/lib/auth/two-step-policy'

function settingsStore() {
  const values = new Map<string, string>()
  return { getSetting: async (key: string) => values.get(key) ?? null, setSetting: async (key: string, value: string) => void values.set(key, value) } as unknown as ConstructorParameters<typeof TwoStepPolicy>[0]
}

describe('the two-step requirement', () => {
  it('holds password accounts of the required roles that have not set it up, and lets go once they have', async () => {
    const on = new Set<string>()
    const reads: string[] = []
    const policy = new TwoStepPolicy(settingsStore(), {
      hasPassword: async userId => userId !== 'oidc-person',
      twoStepOn: async (userId) => {
        reads.push(userId)
        return on.has(userId)
      },
    })
    expect(await policy.requirement()).toBe('off')
    expect(await policy.pending('ann', 'user')).toBe(false)
    await policy.setRequirement('admins')
    expect(await policy.pending('ann', 'user')).toBe(false)
    expect(await policy.pending('root', 'admin')).toBe(true)
    await policy.setRequirement('everyone')
    expect(await policy.pending('ann', 'user')).toBe(true)
    expect(await policy.pending('guest-1', 'guest')).toBe(false)
    expect(await policy.pending('oidc-person', 'user')).toBe(false)
    // Kept a few seconds: a second request does not read again.
    const before = reads.length
    expect(await policy.pending('ann', 'user')).toBe(true)
    expect(reads.length).toBe(before)
    // Set up: forgotten, read again at once.
    on.add('ann')
    policy.forget('ann')
    expect(await policy.pending('ann', 'user')).toBe(false)
  })
})
