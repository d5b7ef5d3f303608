/** A run's named inputs: checked against what the workflow declares, defaults, bounds, and the prompt they make. */
import { describe, expect, it } from 'vitest'
import { MAX_INPUT_ATTACHMENT_BYTES, MAX_INPUT_TEXT_CHARS, workflowDefinitionSchema } from '../../../shared/schemas/workflow'
import { runInputsOf } from '../../../server/lib/workflows/run-inputs'
import { renderTemplate } from '../../../server/lib/workflows/templates'

const workflow = workflowDefinitionSchema.parse({
  version: 1,
  name: 'W',
  inputs: [
    { name: 'topic', type: 'text', required: true },
    { name: 'notes', type: 'long-text' },
    { name: 'count', type: 'number', default: 3 },
  ],
  nodes: [{ id: 'start', kind: 'start' }, { id: 'out', kind: 'output' }],
  edges: [{ from: 'start', to: 'out' }],
})

describe('runInputsOf', () => {
  it('fills defaults, counts an empty text as not given, and writes the inputs out as the prompt', () => {
    expect(runInputsOf(workflow, { inputs: { topic: 'tides', notes: '' } })).toEqual({ prompt: 'topic: tides\nnotes: \ncount: 3', inputs: { topic: 'tides', notes: '', count: '3' } })
    // A prompt given too is kept for {{prompt}}.
    expect(runInputsOf(workflow, { prompt: 'Go', inputs: { topic: 'tides' } }).prompt).toBe('Go')
  })

  it('bounds text: a short text input at its limit, a long text at the prompt\'s', () => {
    expect(() => runInputsOf(workflow, { inputs: { topic: 'x'.repeat(MAX_INPUT_TEXT_CHARS + 1) } })).toThrow(/topic: /)
    expect(runInputsOf(workflow, { inputs: { topic: 'x', notes: 'y'.repeat(50_000) } }).inputs.notes).toHaveLength(50_000)
    expect(() => runInputsOf(workflow, { inputs: { topic: 'x', count: Number.NaN } })).toThrow(/count: /)
  })

  it('fills {{inputs.<name>}} in templates, and an unknown one as empty text', () => {
    const scope = { prompt: 'p', input: 'i', nodes: {}, inputs: { topic: 'tides' } }
    expect(renderTemplate('On {{inputs.topic}}{{ inputs.other }}.', scope)).toBe('On tides.')
  })
})

describe('runInputsOf, again', () => {
  it('takes back the text a run keeps for numbers and yes/no (a run again sends it), and nothing else for them', () => {
    const typed = workflowDefinitionSchema.parse({
      version: 1,
      name: 'W',
      inputs: [{ name: 'count', type: 'number' }, { name: 'flag', type: 'boolean' }],
      nodes: [{ id: 'start', kind: 'start' }, { id: 'out', kind: 'output' }],
      edges: [{ from: 'start', to: 'out' }],
    })
    expect(runInputsOf(typed, { inputs: { count: '50', flag: 'true' } }).inputs).toEqual({ count: '50', flag: 'true' })
    expect(() => runInputsOf(typed, { inputs: { count: '5e3' } })).toThrow(/count: must be a number/)
    expect(() => runInputsOf(typed, { inputs: { flag: 'yes' } })).toThrow(/flag: must be true or false/)
  })

  it('takes a text file for an attachment input, reads it into templates with its name, and refuses what is not UTF-8 text or too large', () => {
    const withFile = workflowDefinitionSchema.parse({ ...workflow, inputs: [{ name: 'report', label: 'Report', type: 'attachment', required: true }] })
    const file = (text: string | Uint8Array, name = 'notes.md') => ({ name, data: Buffer.from(text).toString('base64') })
    const given = runInputsOf(withFile, { inputs: { report: file('# Sales\nUp 4%.') } })
    expect(given.inputs.report).toBe('File “notes.md”:\n\n# Sales\nUp 4%.')
    expect(renderTemplate('Summarise {{inputs.report}}', { prompt: given.prompt, input: '', inputs: given.inputs, nodes: {} })).toContain('# Sales')
    // Run again sends the text it kept.
    expect(runInputsOf(withFile, { inputs: { report: given.inputs.report } }).inputs.report).toBe(given.inputs.report)
    expect(() => runInputsOf(withFile, { inputs: { report: file(new Uint8Array([0x89, 0x50, 0x4E, 0x47, 0, 1, 2]), 'photo.png') } })).toThrow(/report: “photo.png” is not a text file/)
    expect(() => runInputsOf(withFile, { inputs: { report: file(new Uint8Array([0xFF, 0xFE, 0x41])) } })).toThrow(/not a text file/)
    expect(() => runInputsOf(withFile, { inputs: { report: file('x'.repeat(MAX_INPUT_ATTACHMENT_BYTES + 10)) } })).toThrow(/larger than 400 KB/)
    expect(() => runInputsOf(withFile, { inputs: { report: file('y'.repeat(100_001)) } })).toThrow(/more than 100,000 characters/)
    expect(() => runInputsOf(withFile, { inputs: { report: { name: 'a.txt', data: 'not base64!' } } })).toThrow(/base64/)
    expect(() => runInputsOf(withFile, { inputs: { report: 42 } })).toThrow(/report: must be a file/)
    expect(() => runInputsOf(withFile, { inputs: {} })).toThrow(/report: required/)
    expect(workflowDefinitionSchema.safeParse({ ...workflow, inputs: [{ name: 'report', type: 'attachment', default: 'x' }] }).success).toBe(false)
  })
})
