import { mount } from '@vue/test-utils'
import { describe, expect, it } from 'vitest'
import { createMemoryHistory, createRouter } from 'vue-router'
import ToolCallCard from '../../app/components/ToolCallCard.vue'
import type { ToolCallView } from '../../app/utils/job-events'

const base: ToolCallView = { id: 'c1', name: 'get_current_weather', arguments: '{"location":"Paris"}', round: 1, status: 'pending' }

describe('ToolCallCard', () => {
  it.each([
    [{ status: 'pending' }, 'Waiting', 'pending'],
    [{ status: 'running', startedAt: 1 }, 'Running', 'running'],
    [{ status: 'completed', executionTimeMs: 12, result: '{"temperature":70}' }, 'Done', 'completed'],
    [{ status: 'error', error: 'Tool "x" failed: boom', executionTimeMs: 3 }, 'Failed', 'error'],
    [{ status: 'error', timedOut: true, error: 'timed out after 10000 ms', executionTimeMs: 10_000 }, 'Timed out', 'timeout'],
  ] as const)('shows the %o state', (state, label, dataStatus) => {
    const wrapper = mount(ToolCallCard, { props: { call: { ...base, ...state } as ToolCallView } })
    expect(wrapper.find('[data-slot=suffix]').text().split(' · ')[0]).toBe(label)
    expect(wrapper.find('[data-testid=tool-card]').attributes('data-status')).toBe(dataStatus)
    expect(wrapper.find('[data-slot=label]').text()).toMatch(/^get_current_weather/)
  })

  it.each([
    ['approval', 'Waiting for your approval'],
    ['question', 'Waiting for your answer'],
    ['client-tool', 'Waiting for your browser'],
  ] as const)('says a running call waits for the person (%s), not "Running"; once it ends, how it ended', (kind, label) => {
    const wrapper = mount(ToolCallCard, { props: { call: { ...base, status: 'running', startedAt: 1 }, awaiting: kind } })
    expect(wrapper.find('[data-slot=suffix]').text()).toBe(label)
    expect(wrapper.find('[data-testid=tool-card]').attributes('data-awaiting')).toBe(kind)
    const done = mount(ToolCallCard, { props: { call: { ...base, status: 'completed', executionTimeMs: 5 }, awaiting: kind } })
    expect(done.find('[data-slot=suffix]').text()).toBe('Done · 5 ms')
    expect(done.find('[data-testid=tool-card]').attributes('data-awaiting')).toBeUndefined()
  })

  it('shows the duration, the arguments pretty-printed, and the result or error, collapsed until opened', () => {
    const wrapper = mount(ToolCallCard, { props: { call: { ...base, status: 'completed', executionTimeMs: 1500, result: '{"temperature":70,"unit":"F"}' } } })
    expect(wrapper.find('[data-slot=suffix]').text()).toBe('Done · 1.5 s')
    expect(wrapper.find('[data-testid=tool-card]').attributes('data-state')).toBe('closed')
    expect(wrapper.findAll('pre')[0]!.text()).toBe('{\n  "location": "Paris"\n}')
    expect(wrapper.find('[data-testid=tool-result]').text()).toContain('"temperature": 70')

    const failed = mount(ToolCallCard, { props: { call: { ...base, status: 'error', error: 'Invalid arguments: missing "location"' } } })
    expect(failed.find('.tool-card__pre--error').text()).toBe('Invalid arguments: missing "location"')
    expect(failed.find('[data-testid=tool-result]').exists()).toBe(false)
  })

  it('shows a result that is not JSON as it is', () => {
    const wrapper = mount(ToolCallCard, { props: { call: { ...base, status: 'completed', result: 'plain <b>text</b>' } } })
    expect(wrapper.find('[data-testid=tool-result]').text()).toBe('plain <b>text</b>')
    expect(wrapper.find('b').exists()).toBe(false)
  })

  it('offers to connect (or re-authorise) when the call ended because a credential is not set or an account is not connected', () => {
    // Connect is a Nuxt UI link button: it needs the app's router.
    const router = createRouter({ history: createMemoryHistory(), routes: [{ path: '/:any(.*)*', component: { render: () => null } }] })
    const card = (call: ToolCallView) => mount(ToolCallCard, { props: { call }, global: { plugins: [router] } })
    const missing = card({ ...base, status: 'error', error: 'Tool "github_issues" needs the credential "github/token", which is not set. Tell the user to add it in Settings → Credentials (/settings#credentials) and ask again; do not retry before then.' })
    expect(missing.find('[data-testid=tool-connect]').attributes('href')).toBe('/settings#credentials')
    expect(missing.find('[data-testid=tool-connect]').text()).toBe('Connect')
    const stepUp = card({ ...base, status: 'error', error: 'Tool "secure__write" failed: MCP server "secure" needs more access than the user authorised (scope "tools files:write"). Tell the user to re-authorise it in Settings → Connections (/settings#connections) and ask again.' })
    expect(stepUp.find('[data-testid=tool-connect]').text()).toBe('Re-authorise')
    const unauthorised = card({ ...base, status: 'error', error: 'Tool "secure__whoami" failed: The user\'s authorisation for MCP server "secure" expired or was revoked (invalid_grant). Tell the user to re-authorise it in Settings → Connections (/settings#connections) and ask again.' })
    expect(unauthorised.find('[data-testid=tool-connect]').attributes('href')).toBe('/settings#connections')
    const other = card({ ...base, status: 'error', error: 'boom' })
    expect(other.find('[data-testid=tool-connect]').exists()).toBe(false)
  })
})
