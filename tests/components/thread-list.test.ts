/** The sidebar's conversation list: sections by last activity, rename and delete on every row. */
import { flushPromises, mount } from '@vue/test-utils'
import { describe, expect, it } from 'vitest'
import { createMemoryHistory, createRouter } from 'vue-router'
import ThreadList from '../../app/components/ThreadList.vue'
import { groupThreadsByDay, sidebarSections } from '../../app/utils/thread-groups'

const HOUR = 60 * 60 * 1000
const DAY = 24 * HOUR

describe('groupThreadsByDay', () => {
  // Wednesday 2026-11-18, 15:00 in the test's time zone.
  const now = new Date(2026, 10, 18, 15, 0).getTime()
  const at = (year: number, month: number, day: number, hour = 12) => new Date(year, month, day, hour).getTime()

  it('puts each conversation under Today, Yesterday, Previous 7 days, Previous 30 days, or its month', () => {
    const threads = [
      { id: 'future', updatedAt: now + HOUR },
      { id: 'morning', updatedAt: at(2026, 10, 18, 0) },
      { id: 'late-yesterday', updatedAt: at(2026, 10, 17, 23) },
      { id: 'early-yesterday', updatedAt: at(2026, 10, 17, 0) },
      { id: 'monday-last-week', updatedAt: at(2026, 10, 12) },
      { id: 'three-weeks', updatedAt: at(2026, 9, 28) },
      { id: 'september', updatedAt: at(2026, 8, 3) },
      { id: 'last-year', updatedAt: at(2025, 11, 30) },
    ]
    expect(groupThreadsByDay(threads, now, 'en-GB').map(group => [group.label, group.threads.map(thread => thread.id)])).toEqual([
      ['Today', ['future', 'morning']],
      ['Yesterday', ['late-yesterday', 'early-yesterday']],
      ['Previous 7 days', ['monday-last-week']],
      ['Previous 30 days', ['three-weeks']],
      ['September 2026', ['september']],
      ['December 2025', ['last-year']],
    ])
  })

  it('gives one section per label even when the list is not in time order', () => {
    const groups = groupThreadsByDay([{ id: 'a', updatedAt: now }, { id: 'b', updatedAt: now - 2 * DAY }, { id: 'c', updatedAt: now - HOUR }], now)
    expect(groups.map(group => group.label)).toEqual(['Today', 'Previous 7 days'])
    expect(groups[0]!.threads.map(thread => thread.id)).toEqual(['a', 'c'])
  })
})

describe('ThreadList', () => {
  it('shows the sections as headings; each row is its link and one ⋯ menu (two Tab stops)', async () => {
    const router = createRouter({ history: createMemoryHistory(), routes: [{ path: '/:any(.*)*', component: { render: () => null } }] })
    const wrapper = mount(ThreadList, {
      props: { threads: [{ id: 't1', title: 'Time in Tokyo', updatedAt: Date.now() }, { id: 't2', title: 'Old trip', updatedAt: Date.now() - 3 * DAY }], activeId: 't1' },
      global: { plugins: [router], stubs: { NuxtLink: { props: ['to'], template: '<a :href="to"><slot /></a>' } } },
    })
    expect(wrapper.findAll('.threads__heading').map(heading => heading.text())).toEqual(['Today', 'Previous 7 days'])
    expect(wrapper.findAll('.threads__item').map(row => row.text())).toEqual(['Time in Tokyo', 'Old trip'])
    for (const row of wrapper.findAll('.threads__item')) expect(row.findAll('a, button').map(element => element.element.tagName)).toEqual(['A', 'BUTTON'])
    expect(wrapper.find('[aria-label="More for Old trip"]').attributes('aria-haspopup')).toBe('menu')
  })
})

describe('sidebarSections', () => {
  it('puts pinned conversations on top (also under their folder), every folder, and the rest by day; a folder that is gone counts as none', () => {
    const now = Date.now()
    const threads = [
      { id: 'pinned-filed', updatedAt: now, pinned: true, folderId: 'f1' },
      { id: 'filed', updatedAt: now - 1, folderId: 'f1' },
      { id: 'orphan', updatedAt: now - 2, folderId: 'gone' },
      { id: 'loose', updatedAt: now - 3 },
    ]
    const sections = sidebarSections(threads, [{ id: 'f1', name: 'Boats' }, { id: 'f2', name: 'Empty' }], now)
    expect(sections.pinned.map(thread => thread.id)).toEqual(['pinned-filed'])
    expect(sections.folders.map(folder => [folder.name, folder.threads.map(thread => thread.id)])).toEqual([['Boats', ['pinned-filed', 'filed']], ['Empty', []]])
    expect(sections.byDay.flatMap(group => group.threads.map(thread => thread.id))).toEqual(['orphan', 'loose'])
  })
})

describe('ThreadList with pins and folders', () => {
  const router = createRouter({ history: createMemoryHistory(), routes: [{ path: '/:any(.*)*', component: { render: () => null } }] })
  const mountList = () => mount(ThreadList, {
    props: { threads: [{ id: 't1', title: 'Pinned one', updatedAt: Date.now(), pinned: true }, { id: 't2', title: 'Loose one', updatedAt: Date.now() }], folders: [{ id: 'f1', name: 'Boats' }] },
    global: { plugins: [router], stubs: { NuxtLink: { props: ['to'], template: '<a :href="to"><slot /></a>' } } },
  })

  it('shows the pinned section and the folders, and files a conversation dropped on a folder', async () => {
    const wrapper = mountList()
    expect(wrapper.find('[data-testid=pinned]').text()).toContain('Pinned one')
    expect(wrapper.find('[data-testid=folder-Boats]').text()).toContain('Empty')
    const data = new Map<string, string>()
    const dataTransfer = { setData: (type: string, value: string) => data.set(type, value), getData: (type: string) => data.get(type) ?? '', get types() { return [...data.keys()] }, effectAllowed: '' }
    const row = wrapper.findAll('.threads__item').find(item => item.text().includes('Loose one'))!
    await row.trigger('dragstart', { dataTransfer })
    await wrapper.find('[data-testid=folder-Boats]').trigger('dragover', { dataTransfer })
    await wrapper.find('[data-testid=folder-Boats]').trigger('drop', { dataTransfer })
    expect(wrapper.emitted('move')).toEqual([['t2', 'f1']])
  })

  it('names a new folder in place: Enter creates it, Esc leaves nothing', async () => {
    const wrapper = mountList()
    await wrapper.find('[data-testid=new-folder]').trigger('click')
    await flushPromises()
    const field = wrapper.find('input[aria-label="Name of the new folder"]')
    await field.setValue('Trips')
    await field.trigger('keydown', { key: 'Enter' })
    expect(wrapper.emitted('createFolder')).toEqual([['Trips', undefined]])
    await wrapper.find('[data-testid=new-folder]').trigger('click')
    await flushPromises()
    await wrapper.find('input[aria-label="Name of the new folder"]').trigger('keydown', { key: 'Escape' })
    expect(wrapper.find('input[aria-label="Name of the new folder"]').exists()).toBe(false)
    expect(wrapper.emitted('createFolder')).toHaveLength(1)
  })
})
