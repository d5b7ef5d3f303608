/** A run's named inputs: checked against what the workflow declares, defaults, bounds, and the prompt they make. */
import { describe, expect, it } from 'vitest'
import { MAX_INPUT_TEXT_CHARS, workflowDefinitionSchema } from '../../../shared/schemas/workflow'
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
})
