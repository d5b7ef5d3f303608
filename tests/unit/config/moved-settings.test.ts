import { describe, expect, it } from 'vitest'
import { movedSettings } from '../../../server/lib/config/moved-settings'

describe('moved settings', () => {
  it('names each old variable still set and what to set instead, and nothing when none is', () => {
    expect(movedSettings({ NUXT_KNOWLEDGE_BYTES_PER_PERSON: '1000000', NUXT_KNOWLEDGE_FILE_BYTES: '5' })).toEqual([
      '- NUXT_KNOWLEDGE_BYTES_PER_PERSON is no longer read: set NUXT_LIMITS_ROLES_<ROLE>_KNOWLEDGE_MEGABYTES (in MiB, per role, and per group on Admin → Groups).',
    ])
    expect(movedSettings({ NUXT_KNOWLEDGE_DOCUMENTS_PER_PERSON: '' })).toHaveLength(1)
    expect(movedSettings({})).toEqual([])
  })
})
