/**
 * `search_knowledge`: the model searches the knowledge bases attached to its conversation and gets
 * numbered passages, each with where it is from and a link that opens the document at it, to cite.
 * Offered only in a conversation with bases attached (`withKnowledgeGate`); a base the person may
 * no longer read is skipped. A search changes nothing, so a call repeated after a crash is safe.
 */
import { z } from 'zod'
import { defineServerTool, type ServerToolModule } from '../tools/define-tool'
import type { ToolAccessCheck } from '../tools/policy/tool-policy'
import type { PolicyTool } from '../tools/policy/rules'
import type { KnowledgeBases } from './knowledge-bases'
import { passageLink, sourceOf } from './passage-links'

export const SEARCH_KNOWLEDGE = 'search_knowledge'
/** Passages one search returns at most. */
const MAX_RESULTS = 8

/** The tool; `basesOf` says which bases a call's conversation has attached. */
export function searchKnowledgeTool(knowledge: KnowledgeBases, basesOf: (userId: string, threadId: string) => Promise<readonly string[]>): ServerToolModule {
  return defineServerTool({
    name: SEARCH_KNOWLEDGE,
    description: 'Search the knowledge bases attached to this conversation (the team\'s or person\'s documents) for passages about a question. Use it before answering anything those documents may cover, then answer from the passages and cite each one you use with its `cite` link, e.g. "Trains are booked for trips under 500 km [1](/knowledge/…)". Say so when nothing relevant is found.',
    parameters: z.object({
      query: z.string().trim().min(1).max(1_000).describe('What to look for, in words the documents would use, e.g. "travel policy train or plane".'),
      limit: z.number().int().min(1).max(MAX_RESULTS).optional().describe(`Passages to return (default 5, at most ${MAX_RESULTS}).`),
    }),
    capabilities: ['knowledge'],
    idempotent: true,
    handler: async ({ query, limit }, context) => {
      // A workflow agent step searches its own bases; a conversation, those attached to it.
      const attached = context.knowledgeBaseIds ?? await basesOf(context.userId, context.threadId)
      const { bases, hits } = await knowledge.search(context.userId, attached, query, limit ?? 5)
      return {
        query,
        searched: bases.map(base => base.name),
        results: hits.map((hit, index) => ({
          n: index + 1,
          source: sourceOf(hit),
          text: hit.text,
          cite: `[${index + 1}](${passageLink(hit)})`,
        })),
        ...(hits.length === 0 ? { note: 'Nothing in these knowledge bases matches; say so rather than guessing.' } : {}),
      }
    },
  })
}

/** The policy's own check behind each gated one (what `withKnowledgeBases` opens the gate to). */
const ungated = new WeakMap<ToolAccessCheck, ToolAccessCheck>()

/** `check` with `search_knowledge` denied where the conversation has no knowledge base attached. */
export function withKnowledgeGate(check: ToolAccessCheck, hasBases: boolean): ToolAccessCheck {
  if (hasBases) return check
  const gated = (tool: PolicyTool) => (tool.name === SEARCH_KNOWLEDGE ? 'no knowledge base is attached to this conversation' : check(tool))
  const result = Object.assign(gated, { needsApproval: check.needsApproval })
  ungated.set(result, check)
  return result
}

/** `check` for a run that brings bases of its own (a workflow agent step): `search_knowledge` as the policy says. */
export function withKnowledgeBases(check: ToolAccessCheck): ToolAccessCheck {
  return ungated.get(check) ?? check
}
