/** Admin → Groups: a group made from the form is sent with only the limits filled in; a person's limits show where each comes from. */
import { flushPromises, mount } from '@vue/test-utils'
import { afterEach, describe, expect, it, vi } from 'vitest'
import AdminGroups from '../../app/components/AdminGroups.vue'
import type { Group } from '../../shared/types/groups'

const sent: Array<{ url: string, method?: string, body?: unknown }> = []

afterEach(() => {
  sent.length = 0
  vi.unstubAllGlobals()
})

describe('the groups form', () => {
  it('saves a group with the limits filled in, lists it, and shows a person\'s limits with their sources', async () => {
    const groups: Group[] = [{ name: 'research', description: 'Lab', limits: { models: '*' }, createdAt: 1 }]
    vi.stubGlobal('$fetch', async (url: string, options: { method?: string, body?: unknown } = {}) => {
      sent.push({ url, method: options.method, body: options.body })
      if (url === '/api/admin/groups') return { groups: [...groups] }
      if (url.startsWith('/api/admin/groups/') && options.method === 'PUT') {
        groups.push({ name: decodeURIComponent(url.split('/').pop()!), description: '', limits: (options.body as Pick<Group, 'limits'>).limits, createdAt: 2 })
        return groups.at(-1)
      }
      if (url === '/api/admin/users/u1/groups') {
        return { membership: { manual: ['research'], provider: ['staff'], scim: ['ops'] }, groups: ['research'], limits: { models: '*', jobsAtOnce: 3, jobStartsPerMinute: 10, dailyTokens: 0, dailyCost: 0, maxOutputTokens: 0, workflowModelCalls: 50, workflowSteps: 100, knowledgeDocuments: 1_000, knowledgeMegabytes: 200, knowledgePassages: 200_000 }, sources: { models: 'group:research', jobsAtOnce: 'role:user', jobStartsPerMinute: 'role:user', dailyTokens: 'role:user', dailyCost: 'role:user', maxOutputTokens: 'role:user', workflowModelCalls: 'role:user', workflowSteps: 'role:user', knowledgeDocuments: 'role:user', knowledgeMegabytes: 'group:research', knowledgePassages: 'role:user' } }
      }
      throw new Error(`unexpected ${url}`)
    })
    const wrapper = mount(AdminGroups, { props: { accounts: [{ id: 'u1', name: 'Ann', role: 'user', disabled: false, createdAt: 0 }] }, attachTo: document.body })
    await flushPromises()
    expect(wrapper.find('[data-testid="group-research"]').text()).toContain('Lab')
    await wrapper.find('input[data-testid=group-name], [data-testid=group-name] input').setValue('on call')
    await wrapper.find('input[data-testid=group-limit-jobsAtOnce], [data-testid=group-limit-jobsAtOnce] input').setValue('9')
    await wrapper.find('[data-testid=group-form]').trigger('submit')
    await flushPromises()
    expect(sent.find(item => item.method === 'PUT')).toEqual({ url: '/api/admin/groups/on%20call', method: 'PUT', body: { description: '', limits: { jobsAtOnce: 9 } } })
    expect(wrapper.find('[data-testid="group-on call"]').exists()).toBe(true)

    wrapper.findComponent({ name: 'Select' }).vm.$emit('update:modelValue', 'u1')
    await flushPromises()
    expect(wrapper.find('[data-testid=provider-groups]').text()).toContain('staff')
    expect(wrapper.find('[data-testid=scim-groups]').text()).toContain('ops')
    expect(wrapper.find('[data-testid=effective-models]').text()).toContain('group research')
    expect(wrapper.find('[data-testid=effective-jobsAtOnce]').text()).toContain('role user')
    wrapper.unmount()
  })
})
