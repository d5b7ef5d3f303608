/** The step panel's knowledge bases for an agent step: offered when the person has some, chosen into the definition. */
import { mount } from '@vue/test-utils'
import { describe, expect, it } from 'vitest'
import WorkflowStepPanel from '../../app/components/workflow-editor/WorkflowStepPanel.vue'
import ChoicePicker from '../../app/components/ChoicePicker.vue'
import type { WorkflowDefinition } from '../../shared/types/workflow'

const definition: WorkflowDefinition = {
  version: 1,
  name: 'Ask the handbook',
  description: '',
  defaultModel: 'or3/offline-demo',
  nodes: [{ id: 'start', kind: 'start' }, { id: 'lookup', kind: 'agent', systemPrompt: '', tools: [], maxToolRounds: 3, knowledgeBaseIds: ['kb-gone'] }, { id: 'out', kind: 'output' }],
  edges: [{ from: 'start', to: 'lookup' }, { from: 'lookup', to: 'out' }],
}

function panel(knowledgeBases: Array<{ id: string, name: string }>, shown: WorkflowDefinition = definition) {
  // The model and retry fields are not what is tested here.
  return mount(WorkflowStepPanel, { props: { definition: shown, stepId: 'lookup', problems: [], tools: ['calculate'], models: [], knowledgeBases }, global: { stubs: { ModelPicker: true, WorkflowStepRetry: true } } })
}

const knowledgePicker = (wrapper: ReturnType<typeof panel>) => wrapper.findAllComponents(ChoicePicker).find(picker => picker.props('testId') === 'step-knowledge')

describe('an agent step\'s knowledge bases in the step panel', () => {
  it('offers the person\'s bases, keeps one it no longer sees by its id so it can be removed, and tells the choice as the next definition', async () => {
    const wrapper = panel([{ id: 'kb-1', name: 'Handbook' }])
    const picker = knowledgePicker(wrapper)!
    expect(picker.props('choices')).toEqual([{ value: 'kb-1', label: 'Handbook' }, { value: 'kb-gone', label: 'kb-gone' }])
    expect(picker.props('modelValue')).toEqual(['kb-gone'])
    picker.vm.$emit('update:modelValue', ['kb-1'])
    const changed = wrapper.emitted('change')!.at(-1)![0] as WorkflowDefinition
    expect(changed.nodes.find(node => node.id === 'lookup')).toMatchObject({ knowledgeBaseIds: ['kb-1'] })
    // None left: the field goes from the definition.
    picker.vm.$emit('update:modelValue', [])
    const cleared = wrapper.emitted('change')!.at(-1)![0] as WorkflowDefinition
    expect(JSON.parse(JSON.stringify(cleared)).nodes[1]).not.toHaveProperty('knowledgeBaseIds')
  })

  it('shows no knowledge field to a person without bases (knowledge off, or a guest)', () => {
    const without = { ...definition, nodes: definition.nodes.map(node => node.kind === 'agent' ? { ...node, knowledgeBaseIds: undefined } : node) }
    expect(knowledgePicker(panel([], without))).toBeUndefined()
  })
})
