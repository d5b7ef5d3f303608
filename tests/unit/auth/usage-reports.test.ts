/**
 * Usage by model: a run's requests counted per model and recorded with its day's total, a
 * person's history by day and model, the admin's report by person, group and model, its CSV
 * (formulas kept as text), and the spans a report may cover.
 */
import { describe, expect, it } from 'vitest'
import { DailyBudgets, utcDay } from '../../../server/lib/jobs/admission/budget'
import { UsageReports, usageReportCsv, usageSpan, NO_GROUP } from '../../../server/lib/auth/usage-reports'
import { createMemoryAccountBackend } from '../../../server/lib/stores/accounts/memory'
import { testServerConfig } from '../../support/server-config'

const noBudget = { dailyTokens: 0, dailyCost: 0, maxOutputTokens: 0 }
const ask = (model: string) => ({ model, messages: [{ role: 'user' as const, content: 'hi' }] })

describe('usage by model', () => {
  it('counts each model a run asked, with what the upstream reported, and records it with the day', async () => {
    const store = createMemoryAccountBackend()
    const now = Date.UTC(2026, 10, 28, 12)
    const budgets = new DailyBudgets(store, () => now)
    const run = await budgets.admit('ann', noBudget, 10)
    for (const [model, tokens, cost] of [['openai/gpt-4o', 100, 0.01], ['anthropic/claude', 40, 0.02], ['openai/gpt-4o', 60, 0.01]] as const) {
      const request = await run.reserve(ask(model))
      if (typeof request !== 'object') throw new Error('not reserved')
      request.addUsage({ totalTokens: tokens, cost })
      run.finish(request)
    }
    // A request under way counts with its estimate.
    const open = await run.reserve(ask('x/streaming'))
    if (typeof open !== 'object') throw new Error('not reserved')
    open.addText(40)
    const spent = run.spentWithModels()
    expect(spent).toMatchObject({ tokens: 210, cost: 0.04 })
    expect(spent.byModel).toEqual([
      { model: 'openai/gpt-4o', tokens: 160, cost: 0.02 },
      { model: 'anthropic/claude', tokens: 40, cost: 0.02 },
      { model: 'x/streaming', tokens: 10, cost: 0 },
    ])
    await budgets.record('ann', spent)
    run.close()
    expect(await store.getUsage('ann', utcDay(now))).toMatchObject({ tokens: 210, jobs: 1 })
    expect(await store.listModelUsage({ userId: 'ann', from: '2026-11-28', to: '2026-11-28' }, 10)).toEqual([
      { userId: 'ann', day: '2026-11-28', model: 'openai/gpt-4o', tokens: 160, cost: 0.02, jobs: 1 },
      { userId: 'ann', day: '2026-11-28', model: 'anthropic/claude', tokens: 40, cost: 0.02, jobs: 1 },
      { userId: 'ann', day: '2026-11-28', model: 'x/streaming', tokens: 10, cost: 0, jobs: 1 },
    ])
  })

  it('names at most twenty models of one run, the rest together', async () => {
    const run = await new DailyBudgets(createMemoryAccountBackend()).admit('ann', noBudget, 10)
    for (let index = 0; index < 25; index++) {
      const request = await run.reserve(ask(`m/${index}`))
      if (typeof request !== 'object') throw new Error('not reserved')
      request.addUsage({ totalTokens: 100 - index, cost: 0 })
      run.finish(request)
    }
    const { byModel } = run.spentWithModels()
    expect(byModel).toHaveLength(21)
    expect(byModel.at(-1)).toEqual({ model: 'other models', tokens: 80 + 79 + 78 + 77 + 76, cost: 0 })
  })
})

describe('usage reports', () => {
  async function setUp() {
    const store = createMemoryAccountBackend()
    const ann = (await store.createAccount({ name: '=HYPERLINK("x")', passwordHash: 'x', role: 'user' }))!
    const bob = (await store.createAccount({ name: 'Bob', passwordHash: 'x', role: 'user' }))!
    await store.addUsage(ann.id, '2026-11-27', { tokens: 100, cost: 1, byModel: [{ model: 'openai/gpt-4o', tokens: 100, cost: 1 }] })
    await store.addUsage(ann.id, '2026-11-28', { tokens: 30, cost: 0, byModel: [{ model: 'or3/offline-demo', tokens: 30, cost: 0 }] })
    await store.addUsage(bob.id, '2026-11-28', { tokens: 50, cost: 0.5, byModel: [{ model: 'openai/gpt-4o', tokens: 50, cost: 0.5 }] })
    await store.addUsage('guest-1', '2026-11-28', { tokens: 5, cost: 0, byModel: [{ model: 'or3/offline-demo', tokens: 5, cost: 0 }] })
    const groups: Record<string, string[]> = { [ann.id]: ['research', 'ops'], [bob.id]: ['research'] }
    const reports = new UsageReports({ accounts: store, usage: store }, { forRole: async role => testServerConfig().limits.roles[role] }, async id => groups[id] ?? [])
    return { reports, ann, bob }
  }

  it('gives a person their days by model, and the admin everyone by person, group and model', async () => {
    const { reports, ann } = await setUp()
    expect((await reports.history(ann.id, { from: '2026-11-27', to: '2026-11-28' })).rows.map(row => `${row.day} ${row.model} ${row.tokens}`)).toEqual(['2026-11-28 or3/offline-demo 30', '2026-11-27 openai/gpt-4o 100'])
    const span = { from: '2026-11-27', to: '2026-11-28' }
    expect((await reports.report('person', span)).rows.map(row => [row.label, row.tokens, row.jobs])).toEqual([['=HYPERLINK("x")', 130, 2], ['Bob', 50, 1], ['Guest', 5, 1]])
    expect((await reports.report('model', span)).rows.map(row => [row.label, row.tokens, row.people])).toEqual([['openai/gpt-4o', 150, 2], ['or3/offline-demo', 35, 2]])
    expect((await reports.report('group', span)).rows.map(row => [row.label, row.tokens, row.people])).toEqual([['research', 180, 2], ['ops', 130, 1], [NO_GROUP, 5, 1]])
    expect((await reports.report('person', { from: '2026-11-28', to: '2026-11-28' })).rows.map(row => row.tokens)).toEqual([50, 30, 5])
  })

  it('writes a CSV a spreadsheet will not run: names that start like formulas stay text', async () => {
    const { reports } = await setUp()
    const csv = usageReportCsv(await reports.report('person', { from: '2026-11-27', to: '2026-11-28' }))
    expect(csv.split('\r\n')).toEqual([
      'person,tokens,credits,jobs,people,from,to',
      '"\'=HYPERLINK(""x"")",130,1,2,1,2026-11-27,2026-11-28',
      'Bob,50,0.5,1,1,2026-11-27,2026-11-28',
      'Guest,5,0,1,1,2026-11-27,2026-11-28',
      '',
    ])
  })

  it('covers the last 30 days by default and at most 92, refusing a bad day with what to send', () => {
    const now = Date.UTC(2026, 10, 28, 9)
    expect(usageSpan({}, now)).toEqual({ from: '2026-10-30', to: '2026-11-28' })
    expect(usageSpan({ from: '2026-11-01', to: '2026-11-02' }, now)).toEqual({ from: '2026-11-01', to: '2026-11-02' })
    expect(() => usageSpan({ from: '2026-02-30' }, now)).toThrow(/from must be a UTC day/)
    expect(() => usageSpan({ to: ['2026-11-01'] }, now)).toThrow(/to must be a UTC day/)
    expect(() => usageSpan({ from: '2026-11-03', to: '2026-11-02' }, now)).toThrow(/on or before/)
    expect(() => usageSpan({ from: '2026-01-01', to: '2026-11-02' }, now)).toThrow(/at most 92 days; this asks for 306/)
  })
})
