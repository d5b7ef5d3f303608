import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { useBuiltApp } from '../support/built-app'
import { axeViolationsInBothSchemes, screenshot, sidewaysScroll, useChromium, visit, watchForProblems } from './helpers/browser'
import { useProfiles } from './helpers/profiles'

// A job that waits for its person, in a real browser on the offline demo model: the tool policy
// makes `calculate` ask first; the approval shows in every tab of the person, and approving it in
// one finishes the answer shown in another.

const dir = mkdtempSync(join(tmpdir(), 'or3-waits-browser-'))
const policy = join(dir, 'policy.json')
writeFileSync(policy, JSON.stringify({ rules: [{ name: 'ask before calculating', effect: 'approve', tools: ['calculate'] }] }))
// After hooks run last-registered first: the server has stopped before its policy file goes.
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const app = useBuiltApp({ NUXT_TOOLS_POLICY_FILE: policy, NUXT_DEMO_MODEL_TOKEN_DELAY_MS: '0' })
const browser = useChromium()
const profiles = useProfiles(browser)

describe('a job that waits for its person, in the browser', () => {
  it('shows the approval in a second tab, and approving it there finishes the answer in the first', async () => {
    const context = await profiles.fresh({ viewport: { width: 1200, height: 820 } })
    const first = await context.newPage()
    const firstProblems = watchForProblems(first)
    await first.goto(`${app.url}/`)
    await first.getByTestId('composer-input').fill('What is 6*7?')
    await first.getByTestId('composer-input').press('Enter')
    await first.waitForURL(/\/chat\/[\w-]+$/)

    const second = await context.newPage()
    const secondProblems = watchForProblems(second)
    await second.goto(`${app.url}/jobs`)
    const card = second.locator('[data-testid=input-request][data-kind=approval]')
    await card.waitFor()
    expect(await card.innerText()).toContain('calculate')
    expect(await card.getByTestId('input-arguments').innerText()).toContain('6*7')
    expect(await second.locator('[data-testid=job-row][data-waiting=true]').count()).toBe(1)
    await screenshot(second, 'approval-card')
    // In the first tab the conversation shows the wait: its tool card says what it waits for (not
    // "Running"), its card is on the page, and no toast covers it there. The second tab, on Jobs, got one.
    const toolCard = first.locator('[data-testid=tool-card][data-tool=calculate]')
    await toolCard.and(first.locator('[data-awaiting=approval]')).waitFor()
    expect(await toolCard.innerText()).toContain('Waiting for your approval')
    const firstCard = first.locator('[data-testid=input-request][data-kind=approval]')
    await firstCard.waitFor()
    expect(await first.getByTestId('toast').filter({ hasText: 'Waiting for you' }).count()).toBe(0)
    await second.getByTestId('toast').filter({ hasText: 'Waiting for you' }).waitFor()
    // From here the first tab's polls of the open waits fail: what it learns, it learns from the job stream.
    await first.route('**/api/jobs/inputs', route => route.abort())
    await card.getByTestId('approve').click()
    await card.waitFor({ state: 'detached' })
    // The approval's toast in the second tab goes with it.
    await second.getByTestId('toast').filter({ hasText: 'Waiting for you' }).waitFor({ state: 'detached' })
    await firstCard.waitFor({ state: 'detached' })

    const answer = first.getByTestId('message-assistant').last()
    await answer.and(first.locator('[data-status=complete]')).waitFor()
    expect(await answer.getByTestId('message-content').innerText()).toContain('42')
    // The first tab's panel went too, once the answer was given elsewhere.
    await expect.poll(() => first.locator('[data-testid=input-request]').count()).toBe(0)
    for (const problems of [firstProblems, secondProblems]) {
      expect(problems.errors).toEqual([])
      expect(problems.csp).toEqual([])
    }
  })

  it('tells a workflow\'s running agent step something from the run view, which its model reads at its next step', async () => {
    const context = await profiles.fresh({ viewport: { width: 390, height: 800 } })
    const page = await context.newPage()
    const problems = watchForProblems(page)
    await page.goto(`${app.url}/workflows`)
    // The page has its guest session once it shows (its first request made it): a request sent
    // before that would make a guest of its own, and the run would be someone else's to this page.
    await page.locator('[data-testid^=install-]').first().waitFor()
    const jobId = await page.evaluate(async () => {
      const definition = {
        version: 1, name: 'Sum, steered', defaultModel: 'or3/offline-demo',
        nodes: [{ id: 'start', kind: 'start' }, { id: 'sum', kind: 'agent', prompt: '{{prompt}}', tools: ['calculate'], maxToolRounds: 2 }, { id: 'out', kind: 'output' }],
        edges: [{ from: 'start', to: 'sum' }, { from: 'sum', to: 'out' }],
      }
      const saved = await (await fetch('/api/workflows', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ definition }) })).json() as { id: string }
      return (await (await fetch(`/api/workflows/${saved.id}/run`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'What is 6*7?' }) })).json() as { jobId: string }).jobId
    })
    expect(jobId, 'the run started').toMatch(/^[\w-]+$/)
    await visit(page, app.url, `/workflows/runs/${jobId}`)
    // The step waits for the approval of its calculation (its card shows on every page): it runs, and can be told something.
    const card = page.locator('[data-testid=input-request][data-kind=approval]')
    await card.waitFor({ timeout: 60_000 })
    const step = page.locator('[data-testid=run-node][data-node=sum]')
    // What the run view shows of the step, should its field not come (said in the failure).
    const seen = async () => `step ${await step.getAttribute('data-status').catch(() => 'absent')}, run ${await page.getByTestId('run-status').getAttribute('data-status').catch(() => 'absent')}`
    await expect.poll(async () => (await step.getByTestId('step-steer-input').count()) > 0 ? 'shown' : await seen(), { timeout: 60_000 }).toBe('shown')
    await step.getByTestId('step-steer-input').fill('show the working, please')
    await step.getByTestId('step-steer-send').click()
    await step.getByTestId('step-steer-waiting').waitFor()
    expect(await step.getByTestId('step-steer-waiting').innerText()).toContain('show the working, please')
    expect(await axeViolationsInBothSchemes(page, '[data-testid=run-node]')).toEqual([])
    expect(await sidewaysScroll(page)).toBe(0)
    await screenshot(page, 'workflow-step-steer')
    // Approved, the step goes on: its model reads the message before its next request.
    await card.getByTestId('approve').click()
    // (Once the step has ended, what it was told folds away with its details: present, maybe not shown.)
    await step.getByTestId('step-steer-read').waitFor({ state: 'attached' })
    expect(await step.getByTestId('step-steer-read').textContent()).toContain('show the working, please')
    await page.locator('[data-testid=run-status][data-status=complete]').waitFor()
    expect(await step.getByTestId('step-steer-input').count()).toBe(0)
    expect(problems.errors).toEqual([])
    expect(problems.csp).toEqual([])
  })

  it('tells the model a denied call was not run', async () => {
    const context = await profiles.fresh({ viewport: { width: 390, height: 800 } })
    const page = await context.newPage()
    await page.goto(`${app.url}/`)
    await page.getByTestId('composer-input').fill('What is 12*12?')
    await page.getByTestId('composer-input').press('Enter')
    const card = page.locator('[data-testid=input-request][data-kind=approval]')
    await card.waitFor()
    await card.locator('input[type=text]').fill('not now')
    await card.getByTestId('deny').click()
    const answer = page.getByTestId('message-assistant').last()
    await answer.and(page.locator('[data-status=complete]')).waitFor()
    await page.locator('[data-testid=tool-card][data-tool=calculate]').locator('[data-slot=trigger]').click()
    expect(await page.locator('[data-testid=tool-card][data-tool=calculate]').innerText()).toContain('declined')
  })

  it('runs a browser tool in the tab: the location after "Allow", the time zone at once', async () => {
    const context = await profiles.fresh({ viewport: { width: 1200, height: 820 }, geolocation: { latitude: 52.520008, longitude: 13.404954, accuracy: 30 }, permissions: ['geolocation'], timezoneId: 'Asia/Tokyo' })
    const page = await context.newPage()
    const problems = watchForProblems(page)
    await page.goto(`${app.url}/`)
    await page.getByTestId('composer-input').fill('Where am I?')
    await page.getByTestId('composer-input').press('Enter')
    const card = page.locator('[data-testid=input-request][data-kind=client-tool]')
    await card.waitFor()
    expect(await card.innerText()).toContain('Share your location?')
    await screenshot(page, 'browser-tool-consent')
    await card.getByTestId('allow-tool').click()
    const answer = page.getByTestId('message-assistant').last()
    await answer.and(page.locator('[data-status=complete]')).waitFor()
    // City precision: rounded to two decimals in the browser before it left the tab.
    expect(await answer.getByTestId('message-content').innerText()).toContain('52.52, 13.4')

    await page.getByTestId('composer-input').fill('What is my time zone?')
    await page.getByTestId('composer-input').press('Enter')
    const second = page.getByTestId('message-assistant').nth(1)
    await second.and(page.locator('[data-status=complete]')).waitFor()
    expect(await second.getByTestId('message-content').innerText()).toContain('Asia/Tokyo')
    expect(problems.errors).toEqual([])
    expect(problems.csp).toEqual([])
  })
})
