/** Settings → Memory: the switch, the memories with who wrote them, editing, deleting, adding, forgetting all; and why memory cannot be had. */
import { flushPromises, mount } from '@vue/test-utils'
import { afterEach, describe, expect, it, vi } from 'vitest'
import MemorySettings from '../../app/components/MemorySettings.vue'
import type { Memory, MemoryView } from '../../shared/types/memory'

const sent: Array<{ url: string, method?: string, body?: unknown }> = []

afterEach(() => {
  sent.length = 0
  vi.unstubAllGlobals()
})

function serve(initial: MemoryView) {
  const view = structuredClone(initial)
  vi.stubGlobal('$fetch', async (url: string, options: { method?: string, body?: any } = {}) => {
    sent.push({ url, method: options.method, body: options.body })
    if (url === '/api/me/memory' && !options.method) return structuredClone(view)
    if (url === '/api/me/memory' && options.method === 'PUT') {
      view.enabled = options.body.enabled
      return structuredClone(view)
    }
    if (url === '/api/me/memory' && options.method === 'POST') {
      const memory: Memory = { id: `m-${view.memories.length + 1}`, text: options.body.text, source: 'person', createdAt: 3, updatedAt: 3 }
      view.memories.unshift(memory)
      return memory
    }
    if (url === '/api/me/memory' && options.method === 'DELETE') {
      view.memories = []
      return { deleted: 2 }
    }
    const id = decodeURIComponent(url.split('/').pop()!)
    if (options.method === 'PATCH') {
      const memory = view.memories.find(item => item.id === id)!
      memory.text = options.body.text
      return memory
    }
    if (options.method === 'DELETE') {
      view.memories = view.memories.filter(item => item.id !== id)
      return { deleted: true }
    }
    throw new Error(`unexpected ${options.method} ${url}`)
  })
}

describe('Settings → Memory', () => {
  it('turns memory on, lists what is kept with who wrote it, and edits, deletes, adds and forgets everything', async () => {
    serve({ enabled: false, max: 200, memories: [
      { id: 'm-a', text: 'Their dog is called Rex', source: 'assistant', threadId: 't1', createdAt: 1, updatedAt: 2 },
      { id: 'm-b', text: 'Prefers metric units', source: 'person', createdAt: 1, updatedAt: 1 },
    ] })
    vi.stubGlobal('confirm', () => true)
    const wrapper = mount(MemorySettings, { attachTo: document.body })
    await flushPromises()
    const items = wrapper.findAll('[data-memory]')
    expect(items.map(item => item.text())).toEqual([expect.stringContaining('Their dog is called Rex'), expect.stringContaining('Prefers metric units')])
    expect(items[0]!.text()).toContain('From a chat')
    expect(items[1]!.text()).toContain('Added by you')
    expect(wrapper.text()).toContain('2 of 200 memories')

    await wrapper.find('[data-testid=memory-enabled] button, button[data-testid=memory-enabled]').trigger('click')
    await flushPromises()
    expect(sent.find(item => item.method === 'PUT')).toEqual({ url: '/api/me/memory', method: 'PUT', body: { enabled: true } })

    await wrapper.find('[data-memory="m-a"] button').trigger('click')
    await wrapper.find('[data-memory="m-a"] input').setValue('Their dog is called Max')
    await wrapper.find('[data-memory="m-a"] form').trigger('submit')
    await flushPromises()
    expect(sent.find(item => item.method === 'PATCH')).toEqual({ url: '/api/me/memory/m-a', method: 'PATCH', body: { text: 'Their dog is called Max' } })
    expect(wrapper.find('[data-memory="m-a"]').text()).toContain('Their dog is called Max')

    await wrapper.findAll('[data-memory="m-b"] button').at(-1)!.trigger('click')
    await flushPromises()
    expect(wrapper.find('[data-memory="m-b"]').exists()).toBe(false)

    await wrapper.find('input[data-testid=memory-new], [data-testid=memory-new] input').setValue('Lives in Porto')
    await wrapper.find('form.memory__add').trigger('submit')
    await flushPromises()
    expect(sent.find(item => item.method === 'POST')?.body).toEqual({ text: 'Lives in Porto' })
    expect(wrapper.text()).toContain('Lives in Porto')

    await wrapper.find('[data-testid=memory-clear]').trigger('click')
    await flushPromises()
    expect(wrapper.find('[data-testid=memory-none]').exists()).toBe(true)
    wrapper.unmount()
  })

  it('says why memory cannot be had, and offers no switch or form then', async () => {
    serve({ enabled: false, unavailable: 'guest', max: 200, memories: [] })
    const wrapper = mount(MemorySettings, { attachTo: document.body })
    await flushPromises()
    expect(wrapper.find('[data-testid=memory-unavailable]').text()).toContain('sign up')
    expect(wrapper.find('[data-testid=memory-enabled]').exists()).toBe(false)
    expect(wrapper.find('[data-testid=memory-new]').exists()).toBe(false)
    wrapper.unmount()
  })
})
