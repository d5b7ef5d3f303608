/**
 * Groups: what each gives its members (the most generous of the role's and the groups', with
 * where each limit comes from), who is in which (an admin's choice and the provider's claim),
 * and `groups` in tool policy rules.
 */
import { describe, expect, it } from 'vitest'
import { Groups, MAX_GROUPS, mergeLimits } from '../../../server/lib/auth/groups'
import { RoleLimitPolicy } from '../../../server/lib/auth/role-limits'
import { AuthError } from '../../../server/lib/auth/auth-errors'
import { policyDenial } from '../../../server/lib/tools/policy/rules'
import { createMemoryAccountBackend } from '../../../server/lib/stores/accounts/memory'
import { testServerConfig } from '../../support/server-config'
import type { Group } from '../../../shared/types/groups'

const roles = testServerConfig().limits.roles
const group = (name: string, limits: Group['limits']): Group => ({ name, description: '', limits, createdAt: 0 })

describe('a person\'s limits with their groups', () => {
  it('takes the most generous of the role and every group, and says where each came from', () => {
    const base = { ...roles.user, models: 'or3/offline-demo', dailyTokens: 100_000, dailyCost: 1, jobsAtOnce: 2, maxOutputTokens: 4_000 }
    const merged = mergeLimits('user', base, [
      group('research', { models: 'openai/gpt-4o,anthropic/claude-3.5-sonnet', dailyTokens: 500_000, jobsAtOnce: 1 }),
      group('leads', { dailyTokens: 0, dailyCost: 5, maxOutputTokens: 2_000 }),
    ])
    expect(merged.limits).toMatchObject({ models: 'or3/offline-demo,openai/gpt-4o,anthropic/claude-3.5-sonnet', dailyTokens: 0, dailyCost: 5, jobsAtOnce: 2, maxOutputTokens: 4_000 })
    expect(merged.sources).toMatchObject({ models: 'role:user + group:research', dailyTokens: 'group:leads', dailyCost: 'group:leads', jobsAtOnce: 'role:user', maxOutputTokens: 'role:user' })
    expect(merged.groups).toEqual(['research', 'leads'])
    // "Any model" from a group is that group's alone.
    expect(mergeLimits('user', base, [group('all', { models: '*' })]).sources.models).toBe('group:all')
    // A role without budgets (0) keeps them off: no group's budget is more generous than none.
    expect(mergeLimits('admin', { ...base, dailyTokens: 0 }, [group('g', { dailyTokens: 10 })]).limits.dailyTokens).toBe(0)
  })

  it('applies a person\'s groups to their limits, never a guest\'s, from an admin\'s choice or their provider\'s claim', async () => {
    const settings = createMemoryAccountBackend()
    const groups = new Groups(settings)
    const policy = new RoleLimitPolicy(settings, roles, Date.now, groups)
    await groups.save('Research', { limits: { models: '*', dailyTokens: 9_000_000 } })
    await groups.save('ops', { description: 'On call', limits: { jobsAtOnce: 50 } })
    expect((await policy.forRole('user', 'ann')).models).toBe(roles.user.models)
    await groups.setManual('ann', ['research'])
    expect(await policy.forRole('user', 'ann')).toMatchObject({ models: '*', dailyTokens: 9_000_000 })
    expect(await policy.forRole('user')).toEqual(roles.user)
    expect(await policy.forRole('guest', 'ann')).toEqual(roles.guest)
    // The provider's claim counts for groups that exist (others are kept for when one is made).
    await groups.setFromProvider('bob', ['ops', 'not-a-group-yet', 'bad/name'])
    expect((await groups.groupsOf('bob')).map(item => item.name)).toEqual(['ops'])
    expect((await groups.membershipOf('bob')).provider).toEqual(['ops', 'not-a-group-yet'])
    await groups.save('not-a-group-yet', {})
    expect((await groups.groupsOf('bob')).map(item => item.name).sort()).toEqual(['not-a-group-yet', 'ops'])
    // An admin cannot put anyone in a group that does not exist; a deleted group gives nothing.
    expect(await groups.setManual('bob', ['nope']).catch((error: unknown) => AuthError.isInstance(error) && error.refusal)).toBe('unknown-group')
    expect(await groups.remove('OPS')).toBe(true)
    expect(await groups.remove('ops')).toBe(false)
    expect((await groups.groupsOf('bob')).map(item => item.name)).toEqual(['not-a-group-yet'])
    await groups.forget('ann')
    expect(await groups.membershipOf('ann')).toEqual({ manual: [], provider: [], scim: [] })
  })

  it('keeps at most the groups a server may have, and a changed group keeps its name and creation', async () => {
    const groups = new Groups(createMemoryAccountBackend())
    const first = await groups.save('Design', { description: 'v1' })
    expect(await groups.save('design', { description: 'v2' })).toMatchObject({ name: 'Design', description: 'v2', createdAt: first.createdAt })
    for (let index = 1; index < MAX_GROUPS; index++) await groups.save(`g${index}`, {})
    expect(await groups.save('one-too-many', {}).catch((error: unknown) => AuthError.isInstance(error) && error.refusal)).toBe('too-many-groups')
    expect(await groups.save('g1', { description: 'still changeable' })).toMatchObject({ description: 'still changeable' })
  })
})

describe('what groups set for their members\' chats', () => {
  it('gives the first default model by group name and every group\'s instructions, and nothing to people in none', async () => {
    const groups = new Groups(createMemoryAccountBackend())
    await groups.save('support', { defaultModel: 'openai/gpt-4o-mini', instructions: 'Answer as the support desk.' })
    await groups.save('legal', { instructions: 'Never give legal advice.' })
    await groups.save('beta', { defaultModel: 'anthropic/claude-3.5-sonnet' })
    await groups.setManual('ann', ['support', 'legal', 'beta'])
    await groups.setManual('bob', ['support'])
    expect(await groups.chatSettingsOf('ann')).toEqual({ defaultModel: 'anthropic/claude-3.5-sonnet', instructions: 'From the group legal:\nNever give legal advice.\n\nFrom the group support:\nAnswer as the support desk.' })
    expect(await groups.chatSettingsOf('bob')).toEqual({ defaultModel: 'openai/gpt-4o-mini', instructions: 'Answer as the support desk.' })
    expect(await groups.chatSettingsOf('carol')).toEqual({})
    // A bad model id or over-long instructions are refused, naming the field.
    await expect(groups.save('x', { defaultModel: 'not a model' })).rejects.toThrow(/defaultModel/)
    await expect(groups.save('x', { instructions: 'a'.repeat(4_001) })).rejects.toThrow(/4,000/)
    // Saved without them, a group gives none.
    await groups.save('support', {})
    expect(await groups.chatSettingsOf('bob')).toEqual({})
  })
})

describe('changes at once', () => {
  it('keeps every group two admins save at the same moment, on two instances of one store, and both halves of a membership', async () => {
    const store = createMemoryAccountBackend()
    const [a, b] = [new Groups(store), new Groups(store)]
    await Promise.all(Array.from({ length: 10 }, (_, index) => (index % 2 === 0 ? a : b).save(`team-${index}`, {})))
    expect((await new Groups(store).list()).map(group => group.name).sort()).toEqual(Array.from({ length: 10 }, (_, index) => `team-${index}`).sort())
    await Promise.all([a.setManual('ann', ['team-1']), b.setFromProvider('ann', ['team-2']), a.changeScimMembership('ann', { add: ['team-3'] })])
    expect(await new Groups(store).membershipOf('ann')).toEqual({ manual: ['team-1'], provider: ['team-2'], scim: ['team-3'] })
  })
})

describe('tool policy rules for groups', () => {
  const rules = [
    { effect: 'deny' as const, tools: ['source:mcp'], roles: ['user' as const] },
    { effect: 'allow' as const, name: 'engineering gets MCP', tools: ['github__*'], groups: ['Engineering'] },
  ]
  it('apply to members of a listed group (case does not matter), and a deny still wins', () => {
    const tool = { name: 'github__search', source: { kind: 'mcp' as const, name: 'github' } }
    expect(policyDenial([rules[1]!], { userId: 'a', role: 'user', groups: ['engineering'] }, tool)).toBeUndefined()
    expect(policyDenial(rules, { userId: 'a', role: 'user', groups: ['engineering'] }, tool)).toMatch(/denied by the tool policy/)
    expect(policyDenial([{ effect: 'deny', tools: ['*'], groups: ['contractors'] }], { userId: 'b', role: 'user', groups: ['Contractors'] }, { name: 'calculate' })).toMatch(/denied/)
    expect(policyDenial([{ effect: 'deny', tools: ['*'], groups: ['contractors'] }], { userId: 'c', role: 'user' }, { name: 'calculate' })).toBeUndefined()
  })
})
