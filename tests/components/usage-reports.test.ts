/** Usage over time: a person's days by model with each model's total, and the admin's report by person, group or model with its CSV link. */
import { flushPromises, mount } from '@vue/test-utils'
import { afterEach, describe, expect, it, vi } from 'vitest'
import UsageHistory from '../../app/components/UsageHistory.vue'
import AdminUsageReport from '../../app/components/AdminUsageReport.vue'
import type { MyUsageHistory, UsageReport } from '../../shared/types/limits'

const asked: Array<{ url: string, query?: Record<string, unknown> }> = []

afterEach(() => {
  asked.length = 0
  vi.unstubAllGlobals()
})

describe('Settings → Usage over time', () => {
  it('totals each model over the days and lists the days by model', async () => {
    const history: MyUsageHistory = { from: '2026-10-30', to: '2026-11-28', rows: [
      { day: '2026-11-28', model: 'or3/offline-demo', tokens: 30, cost: 0, jobs: 2 },
      { day: '2026-11-27', model: 'openai/gpt-4o', tokens: 100, cost: 0.5, jobs: 1 },
      { day: '2026-11-26', model: 'or3/offline-demo', tokens: 12, cost: 0, jobs: 1 },
    ] }
    vi.stubGlobal('$fetch', async (url: string) => (url === '/api/me/usage' ? history : Promise.reject(new Error(url))))
    const wrapper = mount(UsageHistory)
    await flushPromises()
    expect(wrapper.text()).toContain('2026-10-30 to 2026-11-28')
    expect(wrapper.findAll('[data-testid=usage-by-model] li').map(item => item.text())).toEqual([
      expect.stringMatching(/^openai\/gpt-4o\s*100 tokens · 0\.5000 credits · 1 answers$/),
      expect.stringMatching(/^or3\/offline-demo\s*42 tokens · 0\.0000 credits · 3 answers$/),
    ])
    expect(wrapper.findAll('[data-testid=usage-by-day] tbody tr')).toHaveLength(3)
  })
})

describe('Admin → Usage over time', () => {
  it('asks for the grouping chosen and the days given, shows the rows and links the same report as CSV', async () => {
    vi.stubGlobal('$fetch', async (url: string, options: { query?: Record<string, unknown> } = {}) => {
      asked.push({ url, query: options.query })
      const by = options.query?.by as UsageReport['by']
      return { from: (options.query?.from as string) ?? '2026-10-30', to: (options.query?.to as string) ?? '2026-11-28', by, truncated: false, rows: [{ key: 'k', label: by === 'model' ? 'openai/gpt-4o' : 'Ann', tokens: 1_234, cost: 0.25, jobs: 3, people: 2 }] } satisfies UsageReport
    })
    const wrapper = mount(AdminUsageReport, { attachTo: document.body })
    await flushPromises()
    expect(asked[0]).toEqual({ url: '/api/admin/usage-report', query: { by: 'person' } })
    expect(wrapper.find('[data-row="Ann"]').text()).toContain('1,234')
    await wrapper.find('[data-testid=usage-by-model]').trigger('click')
    await flushPromises()
    expect(asked.at(-1)).toEqual({ url: '/api/admin/usage-report', query: { by: 'model', from: '2026-10-30', to: '2026-11-28' } })
    expect(wrapper.find('[data-row="openai/gpt-4o"]').exists()).toBe(true)
    expect(wrapper.find('[data-testid=usage-by-model]').attributes('aria-pressed')).toBe('true')
    expect(wrapper.find('[data-testid=usage-csv]').attributes('href')).toBe('/api/admin/usage-report?by=model&format=csv&from=2026-10-30&to=2026-11-28')
    wrapper.unmount()
  })
})
