/** Admin → Tool policy: rules name tools by picking them (or whole sources), not by typing ids (issue 29). */
import { flushPromises, mount } from '@vue/test-utils'
import { afterEach, describe, expect, it, vi } from 'vitest'
import AdminToolPolicy from '../../app/components/AdminToolPolicy.vue'

const puts: unknown[] = []

afterEach(() => {
  puts.length = 0
  vi.unstubAllGlobals()
})

function stubFetch() {
  vi.stubGlobal('$fetch', async (url: string, options: { method?: string, body?: { rules: unknown[] } } = {}) => {
    if (url === '/api/tools') {
      return { tools: [
        { name: 'calculate', description: '', parameters: {}, runtime: 'server', source: { kind: 'builtin' } },
        { name: 'github__create_issue', description: '', parameters: {}, runtime: 'server', source: { kind: 'mcp', name: 'github' } },
      ], sources: [] }
    }
    if (options.method === 'PUT') {
      puts.push(options.body)
      return { fileRules: [], adminRules: options.body!.rules }
    }
    return { fileRules: [], adminRules: [{ effect: 'deny', tools: ['linear__*'], roles: ['guest'] }, { effect: 'allow', tools: ['github__*'], groups: ['Engineering', 'ops'] }] }
  })
}

describe('the tool policy form', () => {
  it('offers the server\'s tools and sources in words, keeps a saved pattern, and saves the picked values', async () => {
    stubFetch()
    const wrapper = mount(AdminToolPolicy, { attachTo: document.body })
    await flushPromises()
    const menu = wrapper.findAllComponents({ name: 'InputMenu' })[0]!
    const items = menu.props('items') as Array<{ label: string, value: string }>
    expect(items.map(item => item.label)).toEqual(expect.arrayContaining(['Every built-in tool', 'Every tool of the server "github"', 'calculate', 'github__create_issue', 'linear__*']))
    expect(items.find(item => item.label === 'Every tool of the server "github"')!.value).toBe('source:mcp/github')
    expect(menu.props('modelValue')).toEqual(['linear__*'])
    // Picking a source, and typing a pattern the list does not have.
    menu.vm.$emit('update:modelValue', ['linear__*', 'source:mcp/github'])
    menu.vm.$emit('create', 'notion__* ')
    await flushPromises()
    await wrapper.find('form').trigger('submit')
    await flushPromises()
    // The second rule's groups are kept as they were (the form shows them, and saves them back).
    expect((wrapper.findAll('input[data-testid=policy-groups], [data-testid=policy-groups] input')[1]!.element as HTMLInputElement).value).toBe('Engineering, ops')
    expect(puts).toEqual([{ rules: [{ effect: 'deny', tools: ['linear__*', 'source:mcp/github', 'notion__*'], roles: ['guest'] }, { effect: 'allow', tools: ['github__*'], groups: ['Engineering', 'ops'] }] }])
    wrapper.unmount()
  })
})
