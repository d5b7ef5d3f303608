/**
 * Workflows shipped with the app, installable from the workflows page. A workflow step of an
 * example names another example as `example-<key>`: installing it installs that one too (or uses
 * the one already installed) and puts its id there (app/utils/workflow-examples.ts).
 */
import type { WorkflowDefinition } from '../../../shared/schemas/workflow'

/** Example key → definition. */
export const WORKFLOW_EXAMPLES: Record<string, WorkflowDefinition> = {
  'research-draft-critique': {
    version: 1,
    name: 'Research → draft → critique → answer',
    description: 'Gathers facts with tools, drafts an answer, critiques it, and writes the final answer.',
    defaultModel: 'or3/offline-demo',
    nodes: [
      { id: 'start', kind: 'start', label: 'Question' },
      { id: 'research', kind: 'agent', label: 'Research', systemPrompt: 'You research the question with the tools you have and list the facts you found.', prompt: '{{input}}', tools: ['get_current_time', 'calculate', 'get_current_weather'], maxToolRounds: 3 },
      { id: 'draft', kind: 'agent', label: 'Draft', systemPrompt: 'You write a clear first draft from the research.', prompt: 'Question: {{prompt}}\n\nResearch:\n{{input}}', tools: [], maxToolRounds: 0 },
      { id: 'critique', kind: 'agent', label: 'Critique', systemPrompt: 'You point out what the draft gets wrong or leaves out.', prompt: '{{input}}', tools: [], maxToolRounds: 0 },
      { id: 'final', kind: 'agent', label: 'Final answer', systemPrompt: 'You write the final answer, fixing what the critique found.', prompt: 'Draft:\n{{nodes.draft}}\n\nCritique:\n{{input}}', tools: [], maxToolRounds: 0 },
      { id: 'output', kind: 'output', label: 'Answer' },
    ],
    edges: [
      { from: 'start', to: 'research' },
      { from: 'research', to: 'draft' },
      { from: 'draft', to: 'critique' },
      { from: 'critique', to: 'final' },
      { from: 'final', to: 'output' },
    ],
  },
  'parallel-perspectives': {
    version: 1,
    name: 'Two perspectives, merged',
    description: 'Asks for the facts and for the time in parallel, then merges both into one answer.',
    defaultModel: 'or3/offline-demo',
    nodes: [
      { id: 'start', kind: 'start', label: 'Question' },
      { id: 'fan-out', kind: 'parallel', label: 'Fan out' },
      { id: 'facts', kind: 'agent', label: 'Facts', systemPrompt: 'Answer with facts only.', prompt: '{{prompt}}', tools: ['calculate'], maxToolRounds: 2 },
      { id: 'clock', kind: 'tool', label: 'Time in UTC', tool: 'get_current_time', arguments: { timezone: 'UTC' } },
      { id: 'join', kind: 'merge', label: 'Merge' },
      { id: 'output', kind: 'output', label: 'Answer', template: '{{input}}' },
    ],
    edges: [
      { from: 'start', to: 'fan-out' },
      { from: 'fan-out', to: 'facts' },
      { from: 'fan-out', to: 'clock' },
      { from: 'facts', to: 'join' },
      { from: 'clock', to: 'join' },
      { from: 'join', to: 'output' },
    ],
  },
  'triage-router': {
    version: 1,
    name: 'Triage: weather or anything else',
    description: 'Routes weather questions to the weather tool and everything else to a general agent.',
    defaultModel: 'or3/offline-demo',
    nodes: [
      { id: 'start', kind: 'start', label: 'Question' },
      { id: 'triage', kind: 'router', label: 'Triage', mode: 'condition', conditions: [{ branch: 'weather', contains: 'weather' }], defaultBranch: 'general' },
      { id: 'weather', kind: 'agent', label: 'Weather desk', systemPrompt: 'You answer weather questions with the weather tool.', prompt: '{{input}}', tools: ['get_current_weather'], maxToolRounds: 2 },
      { id: 'general', kind: 'agent', label: 'General desk', systemPrompt: 'You answer anything else.', prompt: '{{input}}', tools: ['calculate', 'get_current_time'], maxToolRounds: 2 },
      { id: 'output', kind: 'output', label: 'Answer' },
    ],
    edges: [
      { from: 'start', to: 'triage' },
      { from: 'triage', to: 'weather', branch: 'weather' },
      { from: 'triage', to: 'general', branch: 'general' },
      { from: 'weather', to: 'output' },
      { from: 'general', to: 'output' },
    ],
  },
  'draft-check-finish': {
    version: 1,
    name: 'Draft, check with me, finish',
    description: 'Drafts an answer, waits for you to approve the draft (from any tab or device), then polishes it; rejected, it tells you why it stopped.',
    defaultModel: 'or3/offline-demo',
    nodes: [
      { id: 'start', kind: 'start', label: 'Request' },
      { id: 'draft', kind: 'agent', label: 'Draft', systemPrompt: 'You write a short first draft.', prompt: '{{input}}', tools: [], maxToolRounds: 0 },
      { id: 'check', kind: 'approval', label: 'Check with me', question: 'Continue with this draft for "{{prompt}}"?' },
      { id: 'polish', kind: 'agent', label: 'Polish', systemPrompt: 'You polish the approved draft without changing what it says.', prompt: '{{input}}', tools: [], maxToolRounds: 0 },
      { id: 'output', kind: 'output', label: 'Answer' },
      { id: 'stopped', kind: 'output', label: 'Stopped', template: 'Stopped at the check. {{input}}' },
    ],
    edges: [
      { from: 'start', to: 'draft' },
      { from: 'draft', to: 'check' },
      { from: 'check', to: 'polish', branch: 'approve' },
      { from: 'check', to: 'stopped', branch: 'reject' },
      { from: 'polish', to: 'output' },
    ],
  },
  'reply-to-each-ticket': {
    version: 1,
    name: 'A reply for each ticket',
    description: 'A loop: drafts a reply to every ticket you paste (one per line, or a JSON array), two at a time, and lists the replies in order.',
    defaultModel: 'or3/offline-demo',
    inputs: [{ name: 'tickets', label: 'Tickets, one per line', type: 'long-text', required: true }],
    nodes: [
      { id: 'start', kind: 'start', label: 'Tickets' },
      {
        id: 'each-ticket',
        kind: 'loop',
        label: 'For each ticket',
        mode: 'for-each',
        items: '{{inputs.tickets}}',
        maxItems: 20,
        concurrency: 2,
        collect: 'text',
        maxIterations: 5,
        onLimit: 'last',
        body: {
          nodes: [
            { id: 'ticket', kind: 'start', label: 'Ticket' },
            { id: 'reply', kind: 'agent', label: 'Draft a reply', systemPrompt: 'You write a short first draft of a friendly reply to this support ticket.', prompt: '{{item}}', tools: [], maxToolRounds: 0 },
            { id: 'reply-out', kind: 'output', label: 'Reply', template: '### Ticket {{index}}: {{item}}\n\n{{input}}' },
          ],
          edges: [{ from: 'ticket', to: 'reply' }, { from: 'reply', to: 'reply-out' }],
        },
      },
      { id: 'output', kind: 'output', label: 'Replies' },
    ],
    edges: [{ from: 'start', to: 'each-ticket' }, { from: 'each-ticket', to: 'output' }],
  },
  'revise-until-ready': {
    version: 1,
    name: 'Draft, then revise until it is ready',
    description: 'A loop: drafts an answer, then critiques and revises it until a model judges it ready to send (at most three rounds).',
    defaultModel: 'or3/offline-demo',
    nodes: [
      { id: 'start', kind: 'start', label: 'Request' },
      { id: 'first-draft', kind: 'agent', label: 'First draft', systemPrompt: 'You write a short first draft.', prompt: '{{input}}', tools: [], maxToolRounds: 0 },
      {
        id: 'revise',
        kind: 'loop',
        label: 'Revise until ready',
        mode: 'until',
        maxItems: 20,
        concurrency: 1,
        collect: 'text',
        until: { ask: 'Is this text ready to send: was it revised after a critique, and does it answer the request?' },
        maxIterations: 3,
        onLimit: 'last',
        body: {
          nodes: [
            { id: 'current', kind: 'start', label: 'Current draft' },
            { id: 'critic', kind: 'agent', label: 'Critique', systemPrompt: 'You point out what the draft gets wrong or leaves out.', prompt: '{{item}}', tools: [], maxToolRounds: 0 },
            { id: 'rewrite', kind: 'agent', label: 'Revise', systemPrompt: 'You write the final answer, fixing what the critique found.', prompt: 'Draft:\n{{item}}\n\nCritique:\n{{input}}', tools: [], maxToolRounds: 0 },
            { id: 'revised', kind: 'output', label: 'Revised draft' },
          ],
          edges: [{ from: 'current', to: 'critic' }, { from: 'critic', to: 'rewrite' }, { from: 'rewrite', to: 'revised' }],
        },
      },
      { id: 'output', kind: 'output', label: 'Answer' },
    ],
    edges: [{ from: 'start', to: 'first-draft' }, { from: 'first-draft', to: 'revise' }, { from: 'revise', to: 'output' }],
  },
  'answer-then-polish': {
    version: 1,
    name: 'Research workflow, then polish',
    description: 'A sub-workflow: runs the "Research → draft → critique → answer" workflow as a child run (installed with this one), then polishes its answer.',
    defaultModel: 'or3/offline-demo',
    nodes: [
      { id: 'start', kind: 'start', label: 'Question' },
      { id: 'research', kind: 'workflow', label: 'Research workflow', workflowId: 'example-research-draft-critique', prompt: '{{input}}', inputs: {} },
      { id: 'polish', kind: 'agent', label: 'Polish', systemPrompt: 'You polish the answer without changing what it says.', prompt: '{{input}}', tools: [], maxToolRounds: 0 },
      { id: 'output', kind: 'output', label: 'Answer' },
    ],
    edges: [{ from: 'start', to: 'research' }, { from: 'research', to: 'polish' }, { from: 'polish', to: 'output' }],
  },
}

/** The workflows shipped with the app, as the workflows page lists them to install. */
export function workflowExamples() {
  return Object.entries(WORKFLOW_EXAMPLES).map(([key, definition]) => ({ key, name: definition.name, description: definition.description, definition }))
}
