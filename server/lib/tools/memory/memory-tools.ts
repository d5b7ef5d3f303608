/**
 * `remember`, `recall` and `forget`: the model keeps short facts about its person between
 * conversations, only while the person has memory on (the tool loop denies them otherwise, see
 * `withMemoryGate`), each one the person's to read and delete in Settings → Memory.
 *
 * Exactly once: a memory's id comes from its job and call, so a `remember` run again after a crash
 * (before or after its write) finds the memory it made; `forget` run again deletes nothing more.
 */
import { z } from 'zod'
import { MEMORY_MAX_CHARS } from '../../../../shared/types/memory'
import { defineServerTool, type ServerToolModule } from '../define-tool'
import type { ToolAccessCheck } from '../policy/tool-policy'
import type { PolicyPrincipal, PolicyTool } from '../policy/rules'
import { registerServerTool } from '../registry'
import { Memories, type MemorySettings } from './memories'

const RECALL_LIMIT = 20

export function memoryTools(memories: Memories): ServerToolModule[] {
  return [
    defineServerTool({
      name: 'remember',
      description: 'Keep one short, lasting fact about this person for later conversations (their name, preferences, projects, what they asked you to remember). One fact per call, in your own words, without secrets such as passwords. They can see and delete every memory.',
      parameters: z.object({
        text: z.string().trim().min(1).max(MEMORY_MAX_CHARS).describe(`The fact, at most ${MEMORY_MAX_CHARS} characters, e.g. "Prefers answers in metric units".`),
      }),
      capabilities: ['memory'],
      idempotent: true,
      handler: async ({ text }, context) => {
        const { memory, added } = await memories.add(context.userId, { text, source: 'assistant', threadId: context.threadId, callKey: `${context.jobId}:${context.toolCallId ?? crypto.randomUUID()}` })
        return { remembered: memory.text, id: memory.id, alreadyKnown: !added }
      },
    }),
    defineServerTool({
      name: 'recall',
      description: 'Search what you remember about this person from earlier conversations (words of the query; without one, the newest memories).',
      parameters: z.object({
        query: z.string().trim().max(500).optional().describe('Words to look for, e.g. "dog name" or "coffee".'),
      }),
      capabilities: ['memory'],
      idempotent: true,
      handler: async ({ query }, context) => {
        const { memories: found, total } = await memories.search(context.userId, query ?? '', RECALL_LIMIT)
        return { query: query ?? '', memories: found.map(memory => ({ id: memory.id, text: memory.text, updatedAt: new Date(memory.updatedAt).toISOString() })), kept: total }
      },
    }),
    defineServerTool({
      name: 'forget',
      description: 'Delete memories about this person when they ask you to forget something: by their ids (from recall or your instructions), or every memory containing all the words of `matching`.',
      parameters: z.object({
        ids: z.array(z.string().min(1).max(64)).max(20).optional().describe('Ids of the memories to delete.'),
        matching: z.string().trim().min(1).max(500).optional().describe('Delete every memory that has all of these words.'),
      }),
      capabilities: ['memory'],
      idempotent: true,
      handler: async ({ ids, matching }, context) => {
        if (!ids?.length && !matching) throw new Error('Say which memories to forget: their ids, or words they contain (matching).')
        const chosen = new Set(ids ?? [])
        if (matching) {
          const { memories: all } = await memories.view(context.userId)
          const wanted = [...new Set(matching.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter(word => word.length > 1))]
          for (const memory of all) {
            const text = memory.text.toLowerCase()
            if (wanted.length > 0 && wanted.every(word => text.includes(word))) chosen.add(memory.id)
          }
        }
        const removed = await memories.remove(context.userId, [...chosen].slice(0, 50))
        return { forgotten: removed.map(memory => memory.text) }
      },
    }),
  ]
}

/** `check` with the memory tools denied to a person who has memory off. */
export function withMemoryGate(check: ToolAccessCheck, memoryOn: boolean): ToolAccessCheck {
  if (memoryOn) return check
  const gated = (tool: PolicyTool) => (tool.capabilities?.includes('memory') ? 'memory is off for this person (they turn it on in Settings → Memory)' : check(tool))
  return Object.assign(gated, { needsApproval: check.needsApproval })
}

/** Who a person is to the tool policy, and the policy's check for them. */
export interface MemoryPolicy {
  principalOf: (userId: string) => Promise<PolicyPrincipal>
  accessFor: (principal: PolicyPrincipal) => Promise<ToolAccessCheck>
}

/**
 * People's memories, and (when memory is on here) the memory tools registered as built-ins: for
 * accounts (never guests) the tool policy lets use `capability:memory`.
 */
export function registerMemory(settings: ConstructorParameters<typeof Memories>[0], config: MemorySettings, policy: MemoryPolicy): Memories {
  const memories = new Memories(settings, config, async (userId) => {
    const principal = await policy.principalOf(userId)
    if (principal.role === 'guest') return { unavailable: 'guest' }
    const denial = (await policy.accessFor(principal))({ name: 'remember', source: { kind: 'builtin' }, capabilities: ['memory'] })
    return denial ? { unavailable: 'policy', reason: denial } : {}
  })
  if (config.enabled) {
    for (const tool of memoryTools(memories)) registerServerTool(tool.definition, tool.handler, { ...tool.options, override: true, source: { kind: 'builtin' } })
  }
  return memories
}
