/**
 * Workflows you keep, in the browser (issue 32): a save with a note is a new version, the history
 * lists every version, a version compares with the current one as a line diff of their JSON, and
 * restoring one saves it as the next version; a workflow with named inputs is run from a form of
 * its inputs. The page with its history, diff and form passes axe in light and dark.
 */
import { describe, expect, it } from 'vitest'
import { useBuiltApp } from '../support/built-app'
import { axeViolationsInBothSchemes, sidewaysScroll, useChromium, visit } from './helpers/browser'
import { useProfiles } from './helpers/profiles'

const app = useBuiltApp({ NUXT_DEMO_MODEL_TOKEN_DELAY_MS: '0' })
const browser = useChromium()
const profiles = useProfiles(browser)

describe('workflows you keep', () => {
  it('saves a change with its note as a new version, compares it with the first, and restores the first as the next', async () => {
    const context = await profiles.fresh({ viewport: { width: 1200, height: 900 }, reducedMotion: 'reduce' })
    const page = await context.newPage()
    const errors: string[] = []
    page.on('pageerror', error => errors.push(error.message))
    // Confirmations (restore) are answered yes.
    page.on('dialog', dialog => void dialog.accept())
    await page.goto(`${app.url}/workflows`)
    await page.locator('[data-testid^=install-]').first().click()
    await page.getByTestId('workflow-item').first().waitFor()
    const history = page.getByTestId('workflow-history')

    // Edit the JSON (the side panel's JSON tab): a new name, saved with a note.
    await page.getByRole('tab', { name: 'JSON' }).click()
    const editor = page.getByLabel('Workflow definition (JSON)')
    const original = await editor.inputValue()
    const definition = JSON.parse(original) as { name: string }
    await editor.fill(JSON.stringify({ ...definition, name: `${definition.name} (edited)` }, null, 2))
    // Saved at once, before the live check (300 ms after typing) has run: what is saved is the text as typed.
    await page.getByTestId('version-note').fill('A clearer name')
    await page.getByTestId('save-workflow').click()
    await page.getByRole('tab', { name: /History/ }).click()
    await history.getByTestId('version-1').waitFor()
    await history.getByTestId('version-2').waitFor()
    expect(await history.getByTestId('version-2').innerText()).toContain('A clearer name')
    expect(await history.getByTestId('version-2').innerText()).toContain('current')

    // Compare version 1 with the current one: the name line, removed and added.
    await history.getByRole('button', { name: 'Compare version 1 with the current one' }).click()
    const diff = page.getByTestId('version-diff')
    await diff.waitFor()
    expect(await diff.locator('.history__line--removed').allInnerTexts()).toEqual([`−   "name": "${definition.name}",`])
    expect(await diff.locator('.history__line--added').allInnerTexts()).toEqual([`+   "name": "${definition.name} (edited)",`])
    // The diff scrolls inside its own box: the page does not widen, and the list beside it stays whole.
    await page.setViewportSize({ width: 1280, height: 900 })
    expect(await sidewaysScroll(page)).toBeLessThanOrEqual(0)

    expect(await axeViolationsInBothSchemes(page, '[data-testid=workflow-history]')).toEqual([])

    // Restore version 1: saved as version 3, with the first name back; nothing lost in between.
    await history.getByRole('button', { name: 'Restore version 1' }).click()
    await history.getByTestId('version-3').waitFor()
    expect(await history.getByTestId('version-3').innerText()).toContain('Restored version 1')
    expect(await page.locator('#workflow-heading').innerText()).toBe(definition.name)
    expect(await history.getByTestId('version-2').count()).toBe(1)
    expect(errors).toEqual([])
  }, 120_000)

  it('runs a workflow with named inputs from a form of its inputs, with their defaults filled in, and runs it again with the same', async () => {
    const context = await profiles.fresh({ viewport: { width: 1200, height: 900 }, reducedMotion: 'reduce' })
    const page = await context.newPage()
    await page.goto(`${app.url}/workflows`)
    await page.locator('[data-testid^=install-]').first().waitFor()
    const workflowId = await page.evaluate(async () => {
      const definition = {
        version: 1,
        name: 'Brief writer',
        defaultModel: 'or3/offline-demo',
        inputs: [
          { name: 'topic', label: 'Topic', type: 'text', required: true },
          { name: 'words', label: 'Words', type: 'number', default: 50 },
          { name: 'tone', label: 'Tone', type: 'choice', choices: ['plain', 'playful'], default: 'plain' },
          { name: 'notes', label: 'Notes', type: 'attachment' },
        ],
        nodes: [{ id: 'start', kind: 'start' }, { id: 'write', kind: 'agent', prompt: 'say {{inputs.words}} words on {{inputs.topic}}' }, { id: 'out', kind: 'output' }],
        edges: [{ from: 'start', to: 'write' }, { from: 'write', to: 'out' }],
      }
      const response = await fetch('/api/workflows', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ definition }) })
      return (await response.json() as { id: string }).id
    })
    await page.goto(`${app.url}/workflows?id=${workflowId}`)
    const form = page.getByTestId('run-form')
    await form.getByTestId('input-topic').waitFor()
    // Required and empty: Run waits for it.
    expect(await form.getByTestId('run-workflow').isDisabled()).toBe(true)
    expect(await form.getByRole('spinbutton').inputValue()).toBe('50')
    expect(await axeViolationsInBothSchemes(page, '[data-testid=run-form]')).toEqual([])
    await form.getByTestId('input-topic').fill('tides')
    // A text file for the attachment input, picked as a person would.
    await form.locator('input[type=file]').setInputFiles({ name: 'notes.md', mimeType: 'text/markdown', buffer: Buffer.from('Spring tides come twice a month.') })
    await form.getByText('notes.md').waitFor()
    await form.getByTestId('run-workflow').click()
    await page.waitForURL(/\/workflows\/runs\/[\w-]+$/)
    const jobId = page.url().split('/').pop()!
    const job = await page.evaluate(async id => (await (await fetch(`/api/jobs/${id}`)).json()) as { workflow: { inputs: Record<string, string> } }, jobId)
    expect(job.workflow.inputs).toEqual({ topic: 'tides', words: '50', tone: 'plain', notes: 'File “notes.md”:\n\nSpring tides come twice a month.' })
    // The run says what it was given and which version ran; once it ends it can run again with the same inputs.
    await expect.poll(() => page.locator('.run').innerText()).toMatch(/Inputs: topic: “tides”; words: “50”; tone: “plain”; notes: “File “notes.md”: Spring tides come twice a month.” · version 1/)
    await page.getByTestId('run-again').click()
    await page.waitForURL(url => /\/workflows\/runs\/[\w-]+$/.test(url.pathname) && !url.pathname.endsWith(jobId))
    const again = await page.evaluate(async id => (await (await fetch(`/api/jobs/${id}`)).json()) as { workflow: { inputs: Record<string, string> } }, page.url().split('/').pop()!)
    expect(again.workflow.inputs).toEqual(job.workflow.inputs)
  }, 120_000)

  it('resumes a failed run from its failed step in the browser: the step before keeps its output', async () => {
    const context = await profiles.fresh({ viewport: { width: 1200, height: 900 }, reducedMotion: 'reduce' })
    const page = await context.newPage()
    await page.goto(`${app.url}/workflows`)
    await page.locator('[data-testid^=install-]').first().waitFor()
    // The second step calls a tool with arguments it refuses, so the run fails there.
    const failedId = await page.evaluate(async () => {
      const definition = {
        version: 1,
        name: 'Fails at the sum',
        nodes: [
          { id: 'start', kind: 'start' },
          { id: 'first', kind: 'agent', label: 'First', prompt: 'say first step done' },
          { id: 'sum', kind: 'tool', label: 'Sum', tool: 'calculate', arguments: { expression: '1 +' } },
          { id: 'out', kind: 'output' },
        ],
        edges: [{ from: 'start', to: 'first' }, { from: 'first', to: 'sum' }, { from: 'sum', to: 'out' }],
      }
      const saved = await (await fetch('/api/workflows', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ definition }) })).json() as { id: string }
      return (await (await fetch(`/api/workflows/${saved.id}/run`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'go' }) })).json() as { jobId: string }).jobId
    })
    await visit(page, app.url, `/workflows/runs/${failedId}`)
    await page.locator('[data-testid=run-status][data-status=error]').waitFor({ timeout: 60_000 })
    const failedStep = page.locator('[data-testid=run-node][data-node=sum]')
    await failedStep.getByTestId('resume-from').click()
    await page.waitForURL(url => !url.pathname.endsWith(failedId))
    await page.getByText('Resumed from').waitFor()
    // It fails at the same step again (its arguments are the same), but the first step was not run again: same output, same time.
    await page.locator('[data-testid=run-status][data-status=error]').waitFor({ timeout: 60_000 })
    const runs = await page.evaluate(async ([before, after]) => Promise.all([before, after].map(async id => (await (await fetch(`/api/jobs/${id}`)).json()) as { workflowState: { nodeStates: Record<string, { output?: string, startedAt?: number, usage?: unknown }> } })), [failedId, page.url().split('/').pop()!])
    // Kept as it was, except what it used: that stays with the run that paid for it.
    const { usage: paid, ...first } = runs[0]!.workflowState.nodeStates.first!
    expect(paid).toBeDefined()
    expect(runs[1]!.workflowState.nodeStates.first).toEqual(first)
    expect(await axeViolationsInBothSchemes(page, '.run')).toEqual([])
  }, 120_000)
})
