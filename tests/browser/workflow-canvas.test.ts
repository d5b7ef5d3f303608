/**
 * Building workflows by hand on the canvas (issue 32): a three-step workflow built with the mouse
 * (a step dragged from the palette, edges drawn between handles) and one built with the keyboard
 * only (steps added, chosen, moved, connected, undone and saved from the keyboard); each saved,
 * run and watched live on the same canvas, and found again in the runs list; a failed run resumed
 * from its failed step. The editor and the runs page pass axe in light and dark, and nothing
 * overflows sideways at 390 px.
 */
import { afterEach, describe, expect, it } from 'vitest'
import type { BrowserContext, Page } from 'playwright-core'
import { useBuiltApp } from '../support/built-app'
import { textReply, useFakeOpenRouter, type RecordedRequest } from '../support/fake-openrouter'
import { axeViolationsInBothSchemes, screenshot, sidewaysScroll, useChromium, visit, watchForProblems } from './helpers/browser'

const MODEL = 'openai/gpt-4o-mini'
const fake = useFakeOpenRouter()
const app = useBuiltApp(() => ({
  NUXT_OPENROUTER_BASE_URL: fake.url,
  NUXT_OPENROUTER_API_KEY: 'sk-or-v1-canvas-test-key',
  NUXT_OPENROUTER_RETRY_BASE_DELAY_MS: '10',
  NUXT_DEMO_MODEL_TOKEN_DELAY_MS: '0',
  NUXT_THREADS_GENERATE_TITLES: 'false',
  NUXT_LIMITS_ROLES_GUEST_MODELS: `or3/offline-demo,${MODEL}`,
}))
const browser = useChromium()
let context: BrowserContext
let problems: ReturnType<typeof watchForProblems> | undefined

afterEach(async () => {
  await context?.close()
  expect([...problems?.errors ?? [], ...problems?.csp ?? []]).toEqual([])
  problems = undefined
})

async function open(width = 1280): Promise<Page> {
  // A context of its own for each test: with a shared, emptied one (helpers/profiles.ts) a test here
  // twice found its new workflow made by one guest and its list read by another (not understood yet).
  context = await browser.newContext({ viewport: { width, height: 900 }, reducedMotion: 'reduce' })
  const page = await context.newPage()
  problems = watchForProblems(page)
  page.on('dialog', dialog => void dialog.accept())
  return page
}

/** The definition as the JSON view shows it now. */
async function jsonView(page: Page): Promise<{ nodes: Array<{ id: string, kind: string, position?: { x: number, y: number }, systemPrompt?: string }>, edges: Array<{ from: string, to: string }> }> {
  return JSON.parse(await page.getByLabel('Workflow definition (JSON)').inputValue())
}

const edgeList = async (page: Page) => (await jsonView(page)).edges.map(edge => `${edge.from}>${edge.to}`).sort()


/** Starts a new workflow and waits for its two steps on the canvas. */
async function newWorkflow(page: Page): Promise<void> {
  await page.goto(`${app.url}/workflows`)
  await page.getByTestId('new-workflow').click()
  await expect.poll(() => page.getByTestId('canvas-step').count()).toBe(2)
}

/**
 * In the chosen step's settings, with the keyboard: opens "Connect to…", moves to the last step
 * listed (`target`, the newest or only one), takes it with Enter once it is highlighted, and
 * presses Connect once the select shows it.
 */
async function connectWithKeyboard(page: Page, target: string): Promise<void> {
  await page.getByTestId('connect-to').focus()
  await page.keyboard.press('Enter')
  const option = page.getByRole('option', { name: target })
  await option.waitFor()
  await page.keyboard.press('End')
  await expect.poll(() => option.getAttribute('data-highlighted')).not.toBeNull()
  await page.keyboard.press('Enter')
  await expect.poll(() => page.getByTestId('connect-to').innerText()).toContain(target)
  // The list closes and gives the focus back to its select after a tick (later on a loaded machine):
  // wait for that, or the focus comes back after Connect was focused and Enter reopens the list.
  await option.waitFor({ state: 'detached' })
  await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('data-testid'))).toBe('connect-to')
  await page.getByTestId('connect').focus()
  await page.keyboard.press('Enter')
  // Connecting clears the select.
  await expect.poll(() => page.getByTestId('connect-to').innerText()).not.toContain(target)
}

/**
 * Chooses `step` on the canvas so that its settings show. A click on a step can land as the page
 * scrolls back to the canvas or re-renders (seen in CI runs: nothing chosen); the focus chooses a
 * step too, and so does Enter on it: each is tried until the side panel shows the step.
 */
async function chooseStep(page: Page, step: string): Promise<void> {
  const node = page.locator(`.vue-flow__node[data-id="${step}"]`)
  const chosen = () => page.getByTestId('step-id').inputValue({ timeout: 1_000 }).catch(() => '')
  const ways = [() => node.click(), () => node.focus(), async () => {
    await node.focus()
    await page.keyboard.press('Enter')
  }]
  for (const way of ways) {
    await way()
    if (await expect.poll(chosen, { timeout: 5_000 }).toBe(step).then(() => true, () => false)) return
  }
  const side = await page.getByTestId('editor-side').innerText().catch(() => '(no side panel)')
  const selected = await page.locator('.vue-flow__node.selected').evaluateAll(nodes => nodes.map(item => item.getAttribute('data-id')))
  throw new Error(`${step} could not be chosen; the canvas marks ${JSON.stringify(selected)} chosen, the side panel shows: ${side.slice(0, 400)}`)
}

/** Runs the selected workflow with `prompt` and waits on its run view until it ends as `status`. */
async function runAndWatch(page: Page, prompt: string, status = 'complete'): Promise<string> {
  await page.getByRole('tab', { name: 'Run' }).click()
  await page.getByTestId('run-prompt').fill(prompt)
  await page.getByTestId('run-workflow').click()
  await page.waitForURL(/\/workflows\/runs\/[\w-]+$/)
  // The run view draws the same canvas, each step with its state as it changes.
  await page.locator('[data-testid=canvas-step][data-step=agent]').waitFor()
  await page.getByTestId('run-status').and(page.locator(`[data-status=${status}]`)).waitFor({ timeout: 60_000 })
  return page.url().split('/').at(-1)!
}

describe('the workflow canvas', () => {
  it('builds start → agent → output with the mouse, saves it, runs it live and finds the run in the runs list', async () => {
    const page = await open()
    await newWorkflow(page)
    // Opening a workflow changes nothing: there is nothing to save.
    expect(await page.getByTestId('save-workflow').isDisabled()).toBe(true)
    expect(await edgeList(page)).toEqual(['start>output'])

    // Drag an agent from the palette onto the canvas: it is placed where it was dropped and chosen.
    const pane = page.locator('.vue-flow__pane')
    await page.getByTestId('add-agent').dragTo(pane, { targetPosition: { x: 260, y: 290 } })
    await page.locator('[data-testid=canvas-step][data-step=agent]').waitFor()
    await page.getByTestId('step-panel').waitFor()
    await page.getByTestId('step-system').fill('Answer in one short paragraph.')
    // The model, searched by name.
    await page.getByTestId('step-model').click()
    await page.getByPlaceholder('Search models…').fill('demo')
    await page.getByRole('option', { name: /demo/i }).first().click()
    await expect.poll(() => page.getByTestId('step-model').innerText()).toMatch(/demo/i)

    // Draw the edges between the handles, and remove the old one from the start's settings.
    const handle = (step: string, side: 'source' | 'target') => page.locator(`.vue-flow__node[data-id="${step}"] .vue-flow__handle.${side}`)
    await handle('start', 'source').dragTo(handle('agent', 'target'))
    await handle('agent', 'source').dragTo(handle('output', 'target'))
    await expect.poll(() => edgeList(page)).toEqual(['agent>output', 'start>agent', 'start>output'])
    await chooseStep(page, 'start')
    await page.getByRole('button', { name: 'Remove the connection to output' }).click()
    await expect.poll(() => edgeList(page)).toEqual(['agent>output', 'start>agent'])
    // Undo brings the edge back; redo removes it again.
    await page.getByTestId('undo').click()
    await expect.poll(() => edgeList(page)).toEqual(['agent>output', 'start>agent', 'start>output'])
    await page.getByTestId('redo').click()
    await expect.poll(() => edgeList(page)).toEqual(['agent>output', 'start>agent'])
    await page.getByRole('status').filter({ hasText: 'Valid. Not saved yet.' }).waitFor()
    await screenshot(page, 'workflow-canvas')

    await page.getByTestId('save-workflow').click()
    await page.getByText('Saved as version 2').first().waitFor()
    const saved = await jsonView(page)
    expect(saved.nodes.find(node => node.id === 'agent')).toMatchObject({ kind: 'agent', systemPrompt: 'Answer in one short paragraph.', model: 'or3/offline-demo', position: expect.any(Object) })

    const runId = await runAndWatch(page, 'What is a workflow?')
    expect(await page.locator('[data-testid=canvas-step][data-step=agent]').getAttribute('data-status')).toBe('completed')
    expect((await page.getByTestId('run-output').innerText()).length).toBeGreaterThan(0)

    // The runs list has it; it opens the same run view.
    await visit(page, app.url, '/workflows/runs')
    const row = page.getByTestId('run-row').filter({ has: page.locator(`a[href$="${runId}"]`) })
    await row.waitFor()
    expect(await row.getAttribute('data-status')).toBe('complete')
    expect(await axeViolationsInBothSchemes(page, 'main')).toEqual([])
    await row.getByTestId('run-link').click()
    await page.waitForURL(new RegExp(`/workflows/runs/${runId}$`))
    await page.getByTestId('run-status').and(page.locator('[data-status=complete]')).waitFor()
  }, 180_000)

  it('builds the same with the keyboard only: adds, chooses, moves, connects, undoes and saves', async () => {
    const page = await open()
    await newWorkflow(page)
    const press = async (testId: string, key = 'Enter') => {
      await page.getByTestId(testId).focus()
      await page.keyboard.press(key)
    }

    // Add an agent from the palette with Enter: it is chosen, its settings open.
    await press('add-agent')
    await page.getByTestId('step-panel').waitFor()
    await page.getByTestId('step-system').focus()
    await page.keyboard.type('Answer briefly.')

    // Connect it to the output from its settings.
    await connectWithKeyboard(page, 'output')
    await expect.poll(() => edgeList(page)).toEqual(['agent>output', 'start>output'])

    // Choose the start step on the canvas (Tab order, Enter), replace its edge to the output by one to the agent.
    const start = page.locator('.vue-flow__node[data-id="start"]')
    await start.focus()
    await page.keyboard.press('Enter')
    await page.getByTestId('step-panel').filter({ hasText: 'start' }).waitFor()
    await page.getByRole('button', { name: 'Remove the connection to output' }).focus()
    await page.keyboard.press('Enter')
    await connectWithKeyboard(page, 'agent')
    await expect.poll(() => edgeList(page)).toEqual(['agent>output', 'start>agent'])

    // Move the agent with the arrow keys, then undo the move with Ctrl+Z.
    const agent = page.locator('.vue-flow__node[data-id="agent"]')
    await agent.focus()
    await page.keyboard.press('Enter')
    const before = (await jsonView(page)).nodes.find(node => node.id === 'agent')!.position!
    await page.keyboard.press('ArrowDown')
    await expect.poll(async () => (await jsonView(page)).nodes.find(node => node.id === 'agent')!.position!.y).toBeGreaterThan(before.y)
    await page.keyboard.press('Control+z')
    await expect.poll(async () => (await jsonView(page)).nodes.find(node => node.id === 'agent')!.position).toEqual(before)
    expect(await edgeList(page)).toEqual(['agent>output', 'start>agent'])

    // A step added from the palette lands in view, and its problem is words on it (not a schema path).
    for (const id of ['tool', 'tool-2']) {
      await press('add-tool')
      const added = page.locator(`.vue-flow__node[data-id="${id}"]`)
      await added.waitFor()
      // Both boxes read together: the page may scroll meanwhile (the focus goes back to the palette).
      await expect.poll(async () => {
        const canvasBox = await page.locator('.vue-flow').boundingBox()
        const box = (await added.boundingBox())!
        return box.x >= canvasBox!.x && box.y >= canvasBox!.y && box.x + box.width <= canvasBox!.x + canvasBox!.width && box.y + box.height <= canvasBox!.y + canvasBox!.height
      }, { message: `${id} in view` }).toBe(true)
    }
    await expect.poll(() => page.getByTestId('workflow-problems').innerText()).toContain('Choose the tool this step calls.')
    expect(await page.getByTestId('workflow-problems').innerText()).not.toMatch(/nodes\.\d|Too small/)
    // Delete removes the step with the focus, not the one chosen before: choose "tool" with Enter,
    // move the focus to "tool-2", Delete: "tool-2" goes; then "tool" (the focus moves to a step).
    const firstTool = page.locator('.vue-flow__node[data-id="tool"]')
    await firstTool.focus()
    await page.keyboard.press('Enter')
    await page.locator('.vue-flow__node[data-id="tool-2"]').focus()
    await page.getByTestId('step-panel').filter({ hasText: 'tool-2' }).waitFor()
    await page.keyboard.press('Delete')
    await expect.poll(async () => (await jsonView(page)).nodes.map(node => node.id)).toEqual(['start', 'output', 'agent', 'tool'])
    await firstTool.focus()
    await page.keyboard.press('Delete')
    await expect.poll(async () => (await jsonView(page)).nodes.map(node => node.id)).toEqual(['start', 'output', 'agent'])
    await expect.poll(() => page.evaluate(() => document.activeElement?.classList.contains('vue-flow__node'))).toBe(true)
    expect(await edgeList(page)).toEqual(['agent>output', 'start>agent'])

    await page.getByRole('status').filter({ hasText: 'Valid. Not saved yet.' }).waitFor()
    await press('save-workflow')
    await page.getByText('Saved as version 2').first().waitFor()
    // The whole page, its "Saved" toast included (the notification region's focus sentinels are not hidden: plugins/toast-focus-sentinels).
    expect(await page.locator('[role=region][aria-label^="Notifications"] > span[tabindex="0"]').count()).toBeGreaterThan(0)
    expect(await axeViolationsInBothSchemes(page, 'body')).toEqual([])
    await runAndWatch(page, 'Say hello')

    // At a phone's width the editor fits: nothing scrolls sideways.
    await page.setViewportSize({ width: 390, height: 844 })
    // Loaded, not moved to: reached through the router, axe once found the zoom level's contrast
    // failing in dark here (not understood yet; see issue 51's note).
    await page.goto(`${app.url}/workflows`)
    await page.getByTestId('workflow-editor').waitFor()
    expect(await sidewaysScroll(page)).toBeLessThanOrEqual(0)
    expect(await axeViolationsInBothSchemes(page, 'main')).toEqual([])
    await visit(page, app.url, '/workflows/runs')
    await page.getByTestId('run-row').first().waitFor()
    expect(await sidewaysScroll(page)).toBeLessThanOrEqual(0)
  }, 180_000)

  it('resumes a failed run from its failed step: the steps before it are not run again', async () => {
    const page = await open()
    await page.goto(`${app.url}/workflows`)
    // The workflow is made over the API as the page's guest: only once the page has its session
    // (a slow page would otherwise get its guest after the API call made another).
    await page.getByTestId('new-workflow').waitFor()
    await expect.poll(async () => (await context.cookies()).some(cookie => /session/i.test(cookie.name))).toBe(true)
    const definition = {
      version: 1,
      name: 'Two agents',
      defaultModel: MODEL,
      nodes: [
        { id: 'start', kind: 'start' },
        { id: 'agent', kind: 'agent', systemPrompt: 'STEP-ONE' },
        { id: 'second', kind: 'agent', systemPrompt: 'STEP-TWO' },
        { id: 'out', kind: 'output' },
      ],
      edges: [{ from: 'start', to: 'agent' }, { from: 'agent', to: 'second' }, { from: 'second', to: 'out' }],
    }
    const created = await page.request.post(`${app.url}/api/workflows`, { data: { definition } })
    expect(created.status()).toBe(201)
    const system = (request: RecordedRequest) => String(request.body.messages.find(message => message.role === 'system')?.content ?? '')
    let failures = 1
    fake.script(request => system(request).includes('STEP-ONE')
      ? textReply('first output')
      : failures-- > 0 ? { type: 'http-error', status: 402, body: { error: { code: 402, message: 'Insufficient credits' } } } : textReply('second output'))
    await page.goto(`${app.url}/workflows?id=${(await created.json()).id}`)
    await page.getByTestId('workflow-item').filter({ hasText: 'Two agents' }).waitFor()
    await runAndWatch(page, 'go', 'error')
    const before = fake.requests.length
    await page.getByRole('button', { name: 'Resume from here (second)' }).click()
    await page.getByText('Resumed from').waitFor()
    await page.getByTestId('run-status').and(page.locator('[data-status=complete]')).waitFor({ timeout: 60_000 })
    expect(fake.requests.slice(before).map(system)).toEqual(['STEP-TWO'])
    expect(await page.getByTestId('run-output').innerText()).toContain('second output')
  }, 180_000)

  it('builds a for-each loop: adds it, edits its own steps on the canvas, runs it, and the run view shows each iteration', async () => {
    const page = await open()
    await newWorkflow(page)
    /** Connects the chosen step to `target` from its settings, with the mouse. */
    const connect = async (target: string) => {
      // An option is the step's id, or its name with its id: "Result (loop-result)".
      const named = new RegExp(`^(.+ \\()?${target}\\)?$`)
      const shown = async () => named.test((await page.getByTestId('connect-to').innerText()).trim())
      // The list may open while the panel re-renders for the step just chosen (a loaded machine):
      // a pick that did not take is made again once the list has closed.
      // On a loaded machine a click on an option can also leave the list open (seen once in a CI
      // run): it is closed with Esc and the pick made again.
      for (let attempt = 0; attempt < 3 && !(await shown()); attempt++) {
        await page.getByTestId('connect-to').click()
        const option = page.getByRole('option').filter({ hasText: named })
        await option.click()
        if (!await option.waitFor({ state: 'detached', timeout: 5_000 }).then(() => true, () => false)) {
          await page.keyboard.press('Escape')
          await option.waitFor({ state: 'detached' })
        }
      }
      await expect.poll(shown).toBe(true)
      // Likewise a click on Connect can land while the panel re-renders for the step just edited
      // (seen once in a CI run): one that did not take is made again (the same edge twice is one edge).
      for (let attempt = 0; attempt < 3 && (await shown()); attempt++) {
        await page.getByTestId('connect').click()
        await expect.poll(shown, { timeout: 5_000 }).toBe(false).catch(() => {})
      }
      await expect.poll(shown).toBe(false)
    }

    // A loop between the start and the output.
    await page.getByTestId('add-loop').click()
    await page.locator('[data-testid=canvas-step][data-step=loop]').waitFor()
    await connect('output')
    await chooseStep(page, 'start')
    await page.getByRole('button', { name: 'Remove the connection to output' }).click()
    await connect('loop')
    await expect.poll(() => edgeList(page)).toEqual(['loop>output', 'start>loop'])

    // Its own steps: an agent between the body's start and its result.
    await chooseStep(page, 'loop')
    // As with Connect, a click on "Edit its steps" can land while the panel re-renders for the step
    // just chosen (seen once in a CI run): one that did not take is made again.
    const inLoop = () => page.getByTestId('leave-loop').isVisible()
    for (let attempt = 0; attempt < 3 && !(await inLoop()); attempt++) {
      // (Bounded: a view that opened late has no such button any more.)
      await page.getByTestId('open-loop').click({ timeout: 5_000 }).catch(() => {})
      await page.getByTestId('leave-loop').waitFor({ timeout: 5_000 }).catch(() => {})
    }
    await page.getByTestId('leave-loop').waitFor()
    await expect.poll(() => page.getByTestId('canvas-step').count()).toBe(2)
    expect(await page.getByTestId('add-loop').count()).toBe(0)
    await page.getByTestId('add-agent').click()
    await page.getByTestId('step-panel').waitFor()
    await page.getByTestId('step-system').fill('You write a short first draft of a reply.')
    await page.getByTestId('step-prompt').fill('{{item}}')
    await connect('loop-result')
    await chooseStep(page, 'loop-item')
    await page.getByRole('button', { name: 'Remove the connection to loop-result' }).click()
    await connect('agent')
    const loop = async () => (await jsonView(page)).nodes.find(node => node.id === 'loop') as unknown as { body: { nodes: Array<{ id: string }>, edges: Array<{ from: string, to: string }> } }
    await expect.poll(async () => (await loop()).body.edges.map(edge => `${edge.from}>${edge.to}`).sort()).toEqual(['agent>loop-result', 'loop-item>agent'])
    await page.getByRole('status').filter({ hasText: 'Valid. Not saved yet.' }).waitFor()
    expect(await axeViolationsInBothSchemes(page, 'main')).toEqual([])
    await page.getByTestId('leave-loop').click()
    await expect.poll(() => page.getByTestId('canvas-step').count()).toBe(3)
    // The loop draws its own steps inside it, as a group.
    expect(await page.locator('[data-testid=canvas-step][data-step=loop] .step__inner').allTextContents()).toEqual(['agent'])
    await screenshot(page, 'workflow-loop')
    await page.getByTestId('save-workflow').click()
    await page.getByText('Saved as version 2').first().waitFor()

    // Run over a list of three: one iteration each, listed on the loop's step with its result.
    await page.getByRole('tab', { name: 'Run' }).click()
    await page.getByTestId('run-prompt').fill('["Late order", "Double charge", "Password reset"]')
    await page.getByTestId('run-workflow').click()
    await page.waitForURL(/\/workflows\/runs\/[\w-]+$/)
    await page.getByTestId('run-status').and(page.locator('[data-status=complete]')).waitFor({ timeout: 60_000 })
    const iterations = page.getByTestId('loop-iteration')
    await expect.poll(() => iterations.count()).toBe(3)
    expect(await iterations.nth(1).textContent()).toContain('Double charge')
    await expect.poll(() => page.locator('[data-testid=canvas-step][data-step=loop]').textContent()).toContain('3/3')
    expect(await axeViolationsInBothSchemes(page, 'main')).toEqual([])
  }, 180_000)

  it('gives the canvas the page: the list hides, the canvas fills the height beside the side panel, zooms, has an overview map, and a problem shows its step', async () => {
    const page = await open()
    await newWorkflow(page)
    await page.getByTestId('toggle-list').click()
    await page.locator('#workflow-list').waitFor({ state: 'hidden' })
    // Beside each other, the canvas down to the hint under it: the page itself does not scroll.
    const canvas = page.locator('.vue-flow')
    const side = page.getByTestId('editor-side')
    await expect.poll(async () => (await side.boundingBox())!.x > (await canvas.boundingBox())!.x + (await canvas.boundingBox())!.width - 1).toBe(true)
    expect((await canvas.boundingBox())!.height).toBeGreaterThan(900 / 2)
    expect(await page.locator('main').evaluate(element => element.scrollHeight - element.clientHeight)).toBeLessThanOrEqual(0)
    await page.getByTestId('canvas-map').waitFor()
    const zoom = page.getByTestId('canvas-zoom')
    const level = async () => Number((await zoom.innerText()).match(/(\d+)%/)![1])
    await page.getByTestId('zoom-fit').click()
    const fitted = await level()
    await page.getByTestId('zoom-out').click()
    await expect.poll(level).toBeLessThan(fitted)
    await page.getByTestId('zoom-fit').click()
    await expect.poll(level).toBe(fitted)
    // The setting is kept: the list stays hidden on the next visit.
    await page.reload()
    await page.getByTestId('canvas-step').first().waitFor()
    expect(await page.locator('#workflow-list').isHidden()).toBe(true)

    // A tool step without its tool: the problem is words, on the step, and its name chooses it.
    await page.getByTestId('add-tool').click()
    await page.getByTestId('step-panel').waitFor()
    await page.locator('.vue-flow__pane').click({ position: { x: 5, y: 5 } })
    await page.getByTestId('no-step-chosen').waitFor()
    const problems = page.getByTestId('workflow-problems')
    await expect.poll(() => problems.innerText()).toMatch(/tool: Choose the tool this step calls\./)
    await problems.getByRole('button', { name: 'Show the step tool' }).click()
    await page.getByTestId('step-panel').filter({ hasText: 'tool' }).waitFor()
    expect(await axeViolationsInBothSchemes(page, 'main')).toEqual([])
    await page.getByTestId('toggle-list').click()
    await page.locator('#workflow-list').waitFor()
  }, 120_000)

  it('makes a schedule and a webhook from the workflow page: the schedule says when it runs next and switches off and on; the URL is shown once and starts a run', async () => {
    const page = await open()
    await newWorkflow(page)
    // Schedules, the webhook and what happens on a failure are the side panel's "Automate" tab.
    await page.getByRole('tab', { name: 'Automate' }).click()
    await page.getByTestId('workflow-schedules').waitFor()
    await page.locator('[data-testid=schedule-every] input, input[data-testid=schedule-every]').fill('90')
    await page.getByTestId('schedule-prompt').fill('The morning digest')
    await page.getByTestId('add-schedule').click()
    const schedule = page.getByTestId('schedule')
    await schedule.waitFor()
    expect(await schedule.innerText()).toContain('Every 90 minutes')
    expect(await page.getByTestId('schedule-next').innerText()).toMatch(/^Next run: /)
    expect(await axeViolationsInBothSchemes(page, '[data-testid=workflow-schedules]')).toEqual([])
    await schedule.getByRole('button', { name: 'Switch off' }).click()
    await expect.poll(() => page.getByTestId('schedule-next').innerText()).toBe('Off')
    await schedule.getByRole('button', { name: 'Switch on' }).click()
    await expect.poll(() => page.getByTestId('schedule-next').innerText()).toMatch(/^Next run: /)
    await page.setViewportSize({ width: 390, height: 844 })
    expect(await sidewaysScroll(page)).toBeLessThanOrEqual(0)
    expect(await axeViolationsInBothSchemes(page, '[data-testid=workflow-schedules]')).toEqual([])
    await page.setViewportSize({ width: 1280, height: 900 })

    const webhook = page.getByTestId('workflow-webhook')
    await webhook.getByTestId('make-webhook').click()
    const shown = webhook.getByTestId('webhook-url')
    await shown.waitFor()
    const url = (await shown.locator('.webhook__url code').innerText()).trim()
    expect(url).toMatch(/\/api\/hooks\/workflows\/[\w-]{22}\.[\w-]{43}$/)
    expect(await axeViolationsInBothSchemes(page, '[data-testid=workflow-webhook]')).toEqual([])
    const called = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'From a webhook' }) })
    expect(called.status).toBe(202)
    await visit(page, app.url, (await called.json()).runPath)
    await page.getByTestId('run-status').and(page.locator('[data-status=complete]')).waitFor({ timeout: 60_000 })
    // Back on the page, it says the webhook is on, and never shows the URL again.
    await visit(page, app.url, '/workflows')
    await page.getByRole('tab', { name: 'Automate' }).click()
    await webhook.getByRole('heading').filter({ hasText: '(on)' }).waitFor()
    expect(await page.content()).not.toContain(url.split('.').pop()!)
  }, 120_000)
})
