import { beforeEach, describe, expect, it } from 'vitest'
import { BudgetExceededError, BudgetHeldError, DailyBudgets, nextUtcMidnight, utcDay } from '../../../server/lib/jobs/admission/budget'
import { estimateRequestTokens, RequestSpend, type RunBudget } from '../../../server/lib/jobs/admission/budget-pool'
import { JobCapacityError, JobSlots } from '../../../server/lib/jobs/admission/caps'
import { clampOutputTokens, JobAdmission } from '../../../server/lib/jobs/admission/gate'
import { RoleLimitPolicy } from '../../../server/lib/auth/role-limits'
import { createMemoryAccountBackend } from '../../../server/lib/stores/accounts/memory'
import type { AccountBackend } from '../../../server/lib/stores/accounts/account-store'
import { workflowModelCallBound } from '../../../server/lib/workflows/model-calls'
import { WORKFLOW_EXAMPLES } from '../../../server/lib/workflows/examples'
import { testServerConfig } from '../../support/server-config'
import type { RoleLimitTable } from '../../../shared/types/limits'

const defaults: RoleLimitTable = testServerConfig().limits.roles
const user = (userId: string, ip = '10.0.0.1') => ({ userId, role: 'user' as const, ip })
const guest = (userId: string, ip = '10.0.0.2') => ({ userId, role: 'guest' as const, ip })

describe('job slots', () => {
  it('keeps a fair share for one person, one address and all guests together, under the server cap', () => {
    const slots = new JobSlots({ maxConcurrentJobs: 8, fairShare: 0.25 })
    expect(slots.fairShare).toBe(2)
    slots.admit('a1', user('ann', '1.1.1.1'), 10)
    slots.admit('a2', user('ann', '1.1.1.1'), 10)
    expect(() => slots.check(user('ann', '1.1.1.9'), 10)).toThrow(expect.objectContaining({ scope: 'user', limit: 2 }))
    // Another person at the same address: the address holds its share already.
    expect(() => slots.check(user('bob', '1.1.1.1'), 10)).toThrow(expect.objectContaining({ scope: 'ip', limit: 2 }))
    slots.admit('g1', guest('g1', '2.2.2.1'), 1)
    slots.admit('g2', guest('g2', '2.2.2.2'), 1)
    const refusal = (() => {
      try {
        slots.check(guest('g3', '2.2.2.3'), 1)
      } catch (error) {
        return error
      }
    })()
    expect(JobCapacityError.isInstance(refusal)).toBe(true)
    expect(refusal).toMatchObject({ scope: 'guests', limit: 2, message: expect.stringMatching(/or sign in/) })
    // A user elsewhere still starts.
    expect(() => slots.check(user('cy', '3.3.3.3'), 10)).not.toThrow()
    slots.release('g1')
    expect(() => slots.check(guest('g3', '2.2.2.3'), 1)).not.toThrow()
  })

  it('applies the role\'s own cap below the fair share, and the server cap above all', () => {
    const slots = new JobSlots({ maxConcurrentJobs: 3, fairShare: 1 })
    slots.admit('x', guest('g'), 1)
    expect(() => slots.check(guest('g'), 1)).toThrow(expect.objectContaining({ scope: 'user', limit: 1 }))
    slots.take('y', { userId: 'resumed' })
    slots.admit('z', user('u', '9.9.9.9'), 5)
    expect(() => slots.check(user('v', '8.8.8.8'), 5)).toThrow(expect.objectContaining({ scope: 'server', limit: 3 }))
    slots.release('x')
    slots.close()
    expect(() => slots.check(user('v', '8.8.8.8'), 5)).toThrow(expect.objectContaining({ scope: 'server' }))
  })

  it('checks room for several jobs that start together (models side by side): all of them, or none', () => {
    const slots = new JobSlots({ maxConcurrentJobs: 4, fairShare: 1 })
    slots.admit('a1', user('ann', '1.1.1.1'), 3)
    // One runs: two more fit Ann's cap of 3, three do not.
    expect(() => slots.check(user('ann', '1.1.1.1'), 3, 2)).not.toThrow()
    expect(() => slots.check(user('ann', '1.1.1.1'), 3, 3)).toThrow(expect.objectContaining({ scope: 'user', limit: 3 }))
    // The server's cap counts them all too.
    slots.admit('b1', user('bob', '2.2.2.2'), 5)
    expect(() => slots.check(user('cat', '3.3.3.3'), 5, 3)).toThrow(expect.objectContaining({ scope: 'server', limit: 4 }))
    expect(() => slots.check(user('cat', '3.3.3.3'), 5, 2)).not.toThrow()
  })

  it('frees a waiting job\'s slot for others, and gives it one back in order once answered', async () => {
    const slots = new JobSlots({ maxConcurrentJobs: 2, fairShare: 1, maxWaitingJobs: 10, maxWaitingJobsPerUser: 10 })
    slots.admit('a1', user('a', '1.1.1.1'), 5)
    slots.admit('a2', user('a', '1.1.1.1'), 5)
    expect(() => slots.check(user('b', '2.2.2.2'), 5)).toThrow(expect.objectContaining({ scope: 'server' }))
    expect(slots.park('a1')).toBe(true)
    expect(slots.park('a2')).toBe(true)
    expect([slots.size, slots.waiting]).toEqual([0, 2])
    slots.admit('b1', user('b', '2.2.2.2'), 5)
    slots.admit('b2', user('b', '2.2.2.2'), 5)

    // Both answered while the server is full: they queue, in order, and go first when slots free.
    const order: string[] = []
    const first = slots.unpark('a1').then(() => order.push('a1'))
    const second = slots.unpark('a2').then(() => order.push('a2'))
    expect(() => slots.check(user('c', '3.3.3.3'), 5)).toThrow(expect.objectContaining({ scope: 'server' }))
    slots.release('b1')
    await first
    expect(order).toEqual(['a1'])
    slots.release('b2')
    await second
    expect(order).toEqual(['a1', 'a2'])
    expect([slots.size, slots.waiting]).toEqual([2, 0])
  })

  it('keeps a waiting job\'s slot past the waiting caps, and lets a stopped job leave the queue', async () => {
    const slots = new JobSlots({ maxConcurrentJobs: 1, fairShare: 1, maxWaitingJobs: 5, maxWaitingJobsPerUser: 1 })
    slots.take('a1', { userId: 'a' })
    slots.take('a2', { userId: 'a' })
    expect(slots.park('a1')).toBe(true)
    expect(slots.park('a2')).toBe(false)
    const stop = new AbortController()
    const queued = slots.unpark('a1', stop.signal)
    stop.abort()
    await queued
    expect(slots.waiting).toBe(1)
    slots.release('a1')
    expect(slots.waiting).toBe(0)
  })
})

describe('daily budgets', () => {
  let store: AccountBackend
  let now: number
  const limits = { dailyTokens: 1_000, dailyCost: 0, maxOutputTokens: 0 }
  beforeEach(() => {
    store = createMemoryAccountBackend()
    now = Date.UTC(2026, 10, 22, 18, 30)
  })

  it('gives what is left today, refuses with 402 details when it is used up, and starts again at midnight UTC', async () => {
    const budgets = new DailyBudgets(store, () => now)
    expect(await budgets.left('ann', limits)).toEqual({ tokens: 1_000, cost: Infinity })
    await budgets.record('ann', { tokens: 600, cost: 0.2 })
    expect(await budgets.left('ann', limits)).toEqual({ tokens: 400, cost: Infinity })
    await budgets.record('ann', { tokens: 450, cost: 0 })
    const refusal = await budgets.admit('ann', limits, 10).catch((error: unknown) => error)
    expect(BudgetExceededError.isInstance(refusal)).toBe(true)
    expect(refusal).toMatchObject({ budget: 'tokens', limit: 1_000, resetsAt: Date.UTC(2026, 10, 23), retryAfterSeconds: 5.5 * 3_600, message: expect.stringMatching(/daily budget of 1,000 tokens\. It starts again at 00:00 UTC/) })
    expect(await budgets.left('bob', limits)).toEqual({ tokens: 1_000, cost: Infinity })
    now = Date.UTC(2026, 10, 23, 0, 1)
    expect(await budgets.left('ann', limits)).toEqual({ tokens: 1_000, cost: Infinity })
    expect(utcDay(now)).toBe('2026-11-23')
    expect(nextUtcMidnight(Date.UTC(2026, 11, 31, 23, 59))).toBe(Date.UTC(2027, 0, 1))
  })

  it('counts credits as their own budget, and records nothing for a job that used nothing', async () => {
    const budgets = new DailyBudgets(store, () => now)
    await budgets.record('ann', { tokens: 0, cost: 0 })
    expect(await store.getUsage('ann', utcDay(now))).toBeNull()
    await budgets.record('ann', { tokens: 10, cost: 1.5 })
    await expect(budgets.admit('ann', { dailyTokens: 0, dailyCost: 1.5, maxOutputTokens: 0 }, 10)).rejects.toMatchObject({ budget: 'cost', limit: 1.5 })
    expect(await budgets.left('ann', { dailyTokens: 0, dailyCost: 0, maxOutputTokens: 0 })).toEqual({ tokens: Infinity, cost: Infinity })
  })

  it('reserves each start\'s first request, so starts at the same moment cannot all take the same remainder', async () => {
    const budgets = new DailyBudgets(store, () => now)
    const small = { dailyTokens: 40, dailyCost: 0, maxOutputTokens: 0 }
    const starts = await Promise.allSettled([1, 2, 3, 4, 5].map(() => budgets.admit('ann', small, 500)))
    const admitted = starts.filter(start => start.status === 'fulfilled').map(start => (start as PromiseFulfilledResult<RunBudget>).value)
    expect(admitted).toHaveLength(1)
    const refusals = starts.filter(start => start.status === 'rejected').map(start => (start as PromiseRejectedResult).reason)
    expect(refusals.every(BudgetHeldError.isInstance)).toBe(true)
    expect(refusals[0]).toMatchObject({ budget: 'tokens', limit: 40, retryAfterSeconds: 5, message: expect.stringMatching(/answers in progress may use the rest of your daily budget of 40 tokens/) })
    expect(await budgets.left('ann', small)).toEqual({ tokens: 0, cost: Infinity })
    // The run's first request takes over the start's reservation; its usage replaces it when it ends.
    const run = admitted[0]!
    const request = await run.reserve({ messages: [{ role: 'user', content: 'hi' }] })
    expect(request).toBeInstanceOf(RequestSpend)
    ;(request as RequestSpend).addUsage({ totalTokens: 12, cost: 0 })
    run.finish(request as RequestSpend)
    expect(await budgets.left('ann', small)).toEqual({ tokens: 28, cost: Infinity })
    await budgets.record('ann', run.spent())
    run.close()
    expect(budgets.pools.size).toBe(0)
    expect(await budgets.left('ann', small)).toEqual({ tokens: 28, cost: Infinity })
    // A start that does not go on frees what it reserved.
    const abandoned = await budgets.admit('ann', small, 500)
    expect(await budgets.left('ann', small)).toEqual({ tokens: 0, cost: Infinity })
    abandoned.close()
    expect(await budgets.left('ann', small)).toEqual({ tokens: 28, cost: Infinity })
  })

  it('makes a request wait while the rest is only held by requests under way, and refuses one once it is spent', async () => {
    const budgets = new DailyBudgets(store, () => now)
    const run = await budgets.resume('ann', { dailyTokens: 100, dailyCost: 0, maxOutputTokens: 60 })
    const first = await run.reserve({ messages: [{ role: 'user', content: 'x'.repeat(40) }] }) as RequestSpend
    expect(first.reservedTokens).toBe(70)
    const second = await run.reserve({ messages: [] }) as RequestSpend
    expect(second.reservedTokens).toBe(30)
    let third: unknown
    const waiting = run.reserve({ messages: [] }).then(result => (third = result))
    await Promise.resolve()
    expect(third).toBeUndefined()
    first.addUsage({ totalTokens: 20, cost: 0 })
    run.finish(first)
    await waiting
    // 100 - 20 used - 30 held by the second: the third gets the 50 left.
    expect((third as RequestSpend).reservedTokens).toBe(50)
    second.addText(400)
    ;(third as RequestSpend).addUsage({ totalTokens: 30, cost: 0 })
    expect(run.exceeded()).toBe('tokens')
    expect(await run.reserve({ messages: [] })).toBe('tokens')
    // A waiting request gives up when its run stops.
    const stop = new AbortController()
    const other = await budgets.resume('ann', { dailyTokens: 100, dailyCost: 0, maxOutputTokens: 60 })
    run.finish(second)
    run.finish(third as RequestSpend)
    expect(await other.reserve({ messages: [] }, stop.signal)).toBe('tokens')
  })
})

describe('a resumed run whose ledger cannot be read', () => {
  it('takes nothing to be left (its first request is refused), and a role without a budget is never refused', async () => {
    const broken = { getUsage: async () => { throw new Error('store down') }, addUsage: async () => {} }
    const budgets = new DailyBudgets(broken)
    const run = await budgets.resume('ann', { dailyTokens: 100, dailyCost: 0, maxOutputTokens: 0 })
    expect(await run.reserve({ messages: [] })).toBe('tokens')
    run.close()
    const free = await budgets.resume('ann', { dailyTokens: 0, dailyCost: 0, maxOutputTokens: 0 })
    expect(await free.reserve({ messages: [] })).toBeInstanceOf(RequestSpend)
  })
})

describe('request spend', () => {
  it('estimates streamed text until the real usage arrives, and estimates a request from its prompt and max_tokens', () => {
    const spend = new RequestSpend()
    spend.addText(200)
    expect(spend.spent()).toEqual({ tokens: 50, cost: 0 })
    spend.addUsage({ totalTokens: 70, cost: 0.5 })
    expect(spend.spent()).toEqual({ tokens: 70, cost: 0.5 })
    spend.addText(120)
    expect(spend.spent()).toEqual({ tokens: 70, cost: 0.5 })
    expect(estimateRequestTokens({ messages: [{ role: 'user', content: 'x'.repeat(400) }], max_tokens: 50 }, 1_024)).toBe(150)
    expect(estimateRequestTokens({ messages: [{ role: 'user', content: [{ type: 'text', text: 'abcd' }, { type: 'image_url', image_url: { url: `data:${'A'.repeat(10_000)}` } }] }] }, 1_024)).toBe(1_025)
  })
})

describe('admission', () => {
  it('checks models, a workflow\'s cost, caps, rate and budget in that order, with the role\'s limits as the admin set them', async () => {
    const store = createMemoryAccountBackend()
    const policy = new RoleLimitPolicy(store, defaults)
    const admission = new JobAdmission({ maxConcurrentJobs: 20, fairShare: 0.5, jobStartsPerIpPerMinute: 1_000, roleLimits: policy, usage: store })
    await expect(admission.admit(guest('g'), { models: ['openai/gpt-4o'] })).rejects.toMatchObject({ refusal: 'model-not-allowed' })
    const admitted = await admission.admit(guest('g'), { models: ['or3/offline-demo'] })
    expect(admitted).toMatchObject({ limits: { dailyTokens: 200_000, maxOutputTokens: 4_096 } })
    admitted.budget.close()
    const costly = structuredClone(WORKFLOW_EXAMPLES['triage-router']!)
    for (const node of costly.nodes) if (node.kind === 'agent') Object.assign(node, { maxToolRounds: 20, retries: 5 })
    expect(workflowModelCallBound(costly)).toBeGreaterThan(50)
    await expect(admission.admit(guest('g'), { models: ['or3/offline-demo'], workflow: costly })).rejects.toMatchObject({ name: 'WorkflowCostError', limit: 50 })

    await policy.setOverrides({ guest: { models: '*', dailyTokens: 10, jobStartsPerMinute: 3 } })
    expect((await policy.view()).effective.guest).toMatchObject({ models: '*', dailyTokens: 10, jobsAtOnce: 2 })
    ;(await admission.admit(guest('h'), { models: ['openai/gpt-4o'] })).budget.close()
    await store.addUsage('h', utcDay(Date.now()), { tokens: 10, cost: 0 })
    await expect(admission.admit(guest('h'), { models: ['or3/offline-demo'] })).rejects.toMatchObject({ name: 'BudgetExceededError' })
    await expect(admission.admit(guest('h'), { models: ['or3/offline-demo'] })).rejects.toMatchObject({ name: 'BudgetExceededError' })
    // Those refusals still counted as starts: the fourth is over the admin's rate of 3.
    await expect(admission.admit(guest('h'), { models: ['or3/offline-demo'] })).rejects.toMatchObject({ name: 'RateLimitError', limit: 3 })
    expect(await admission.budgetLeft('h', 'guest')).toEqual({ tokens: 0, cost: Infinity })
    expect(await (await admission.budgetOnResume('h', 'guest')).reserve({ messages: [] })).toBe('tokens')
    await policy.setOverrides({})
    expect((await policy.view()).effective.guest).toEqual(defaults.guest)
  })

  it('lowers max_tokens and the reasoning budget to the role\'s clamp, and leaves them alone without one', () => {
    expect(clampOutputTokens({ max_tokens: 50_000, reasoning: { max_tokens: 9_000, effort: 'high' }, temperature: 1 }, 4_096)).toEqual({ max_tokens: 4_096, reasoning: { max_tokens: 4_096, effort: 'high' }, temperature: 1 })
    expect(clampOutputTokens({ max_tokens: 100 }, 4_096)).toEqual({ max_tokens: 100 })
    expect(clampOutputTokens({ temperature: 1 }, 4_096)).toEqual({ temperature: 1, max_tokens: 4_096 })
    expect(clampOutputTokens({ max_tokens: 50_000 }, 0)).toEqual({ max_tokens: 50_000 })
  })

  it('ignores a stored override that no longer parses, rather than refusing every start', async () => {
    const store = createMemoryAccountBackend()
    await store.setSetting('role-limits', '{"guest":{"jobsAtOnce":"many"}}')
    expect((await new RoleLimitPolicy(store, defaults).forRole('guest'))).toEqual(defaults.guest)
  })
})
