import { mount } from '@vue/test-utils'
import { describe, expect, it } from 'vitest'
import AdminRoleLimits from '../../app/components/AdminRoleLimits.vue'
import type { RoleLimits, RoleLimitsView } from '../../shared/types/limits'

const role = (models: string, dailyTokens: number): RoleLimits => ({ models, jobsAtOnce: 5, jobStartsPerMinute: 20, dailyTokens, dailyCost: 0, maxOutputTokens: 16_384, workflowModelCalls: 200, workflowSteps: 1_000, knowledgeDocuments: 1_000, knowledgeMegabytes: 200, knowledgePassages: 200_000 })
const defaults = { admin: role('*', 0), user: role('*', 2_000_000), guest: role('or3/offline-demo', 200_000) }
const view: RoleLimitsView = { defaults, overrides: { user: { dailyTokens: 500_000 } }, effective: { ...defaults, user: role('*', 500_000) } }

describe('admin role limits', () => {
  it('shows each default as a placeholder and each change as a value, and saves only what is filled in', async () => {
    const wrapper = mount(AdminRoleLimits, { props: { view } })
    const guestTokens = wrapper.get<HTMLInputElement>('[data-testid="limit-guest-dailyTokens"]')
    expect(guestTokens.element.placeholder).toBe('200000')
    expect(guestTokens.element.value).toBe('')
    expect(wrapper.get<HTMLInputElement>('[data-testid="limit-user-dailyTokens"]').element.value).toBe('500000')
    expect(wrapper.get<HTMLInputElement>('[data-testid="limit-guest-models"]').element.placeholder).toBe('or3/offline-demo')

    await guestTokens.setValue('1000')
    await wrapper.get('[data-testid="limit-guest-models"]').setValue(' or3/offline-demo,openai/gpt-4o-mini ')
    await wrapper.get('[data-testid="limit-user-dailyTokens"]').setValue('')
    await wrapper.get('[data-testid="role-limits"]').trigger('submit')
    expect(wrapper.emitted('save')).toEqual([[{ guest: { models: 'or3/offline-demo,openai/gpt-4o-mini', dailyTokens: 1000 } }]])
  })
})
