/**
 * Tool access rules: who may use which tools. A rule allows or denies tool patterns (exact names,
 * globs such as `github__*`, or whole sources: `source:builtin`, `source:mcp`, `source:mcp/github`,
 * `source:dynamic`, `source:file`) for roles, groups and/or named users (none of them:
 * everyone). For a principal and a tool: a matching deny wins; else a matching allow allows; else
 * the default: `admin` and `user` may use every tool, a `guest` only those built into the server
 * (the built-ins and server/tools files; no MCP or dynamic tools) that reach nothing beyond their
 * answer (no internet, workspace, code execution or subagents: those cost the server more than a
 * visitor without an account should spend). A rule with `effect: 'approve'`
 * allows nothing by itself: a call it matches waits for its user's approval.
 *
 * Globs are matched by a linear two-pointer scan (no regular expression is built from them), and
 * names and patterns are short and bounded, so no pattern can make matching slow.
 */
import { z } from 'zod'
import type { Role } from '../../../../shared/types/account'
import { TOOL_CAPABILITIES, type ToolCapability, type ToolSourceRef } from '../../../../shared/types/tool'
import type { ToolPolicyRule } from '../../../../shared/types/tool-policy'

export type { ToolPolicyRule }

/** A tool pattern: letters, digits, `_`, `-`, `*`, `?`, or `source:<kind>[/<name>]`. */
const pattern = z.string().trim().min(1).max(128).regex(new RegExp(String.raw`^(?:source:(?:builtin|file|mcp|dynamic)(?:\/[\w.-]{1,200})?|capability:(?:${TOOL_CAPABILITIES.join('|')})|[\w*?-]{1,64})$`), `must be a tool name, a glob of one (letters, digits, _, -, * and ?), source:builtin, source:file, source:dynamic, source:mcp, source:mcp/<server>, or capability:<${TOOL_CAPABILITIES.join('|')}>`)

export const toolPolicyRuleSchema: z.ZodType<ToolPolicyRule> = z.object({
  /** Shown in refusals ("denied by policy <name>"). */
  name: z.string().trim().min(1).max(80).optional(),
  effect: z.enum(['allow', 'deny', 'approve']),
  tools: z.array(pattern).min(1).max(200),
  roles: z.array(z.enum(['admin', 'user', 'guest'])).max(3).optional(),
  /** Account names (as they sign in; case does not matter) or ids. */
  users: z.array(z.string().trim().min(1).max(128)).max(1_000).optional(),
  /** Groups (Admin → Groups, or an identity provider's groups claim; case does not matter). */
  groups: z.array(z.string().trim().min(1).max(64)).max(200).optional(),
}).strict()

export const toolPolicySchema = z.object({
  rules: z.array(toolPolicyRuleSchema).max(500).default([]),
}).strict()

/** Whom a decision is for. */
export interface PolicyPrincipal {
  userId: string
  role: Role
  /** The account's name, for rules that list users by name. */
  name?: string
  /** The account's groups, for rules that list groups. */
  groups?: readonly string[]
}

/** What a decision looks at of a tool. */
export interface PolicyTool {
  name: string
  source?: ToolSourceRef
  /** What it reaches beyond its answer. */
  capabilities?: readonly ToolCapability[]
  /** The groups it is for (an MCP server's `groups`), when it is not for everyone. */
  groups?: readonly string[]
}

/** Whether `text` matches the glob `glob` (`*`: any run of characters, `?`: one character). */
export function globMatches(glob: string, text: string): boolean {
  let g = 0
  let t = 0
  let star = -1
  let resume = 0
  while (t < text.length) {
    if (g < glob.length && (glob[g] === '?' || glob[g] === text[t])) {
      g++
      t++
    } else if (g < glob.length && glob[g] === '*') {
      star = g++
      resume = t
    } else if (star !== -1) {
      g = star + 1
      t = ++resume
    } else {
      return false
    }
  }
  while (g < glob.length && glob[g] === '*') g++
  return g === glob.length
}

function patternMatches(pattern: string, tool: PolicyTool): boolean {
  if (pattern.startsWith('capability:')) return tool.capabilities?.includes(pattern.slice('capability:'.length) as ToolCapability) ?? false
  if (!pattern.startsWith('source:')) return globMatches(pattern, tool.name)
  const [kind, name] = pattern.slice('source:'.length).split('/', 2)
  const source = tool.source ?? { kind: 'file' as const }
  if (source.kind !== kind) return false
  return name === undefined || source.name === name
}

function appliesTo(rule: ToolPolicyRule, principal: PolicyPrincipal): boolean {
  if (!rule.roles && !rule.users && !rule.groups) return true
  if (rule.roles?.includes(principal.role)) return true
  if (rule.groups && principal.groups?.some(group => rule.groups!.some(wanted => wanted.toLowerCase() === group.toLowerCase()))) return true
  const name = principal.name?.toLowerCase()
  return rule.users?.some(user => user === principal.userId || (name !== undefined && user.toLowerCase() === name)) ?? false
}

/** Why `principal` may not use `tool`, or undefined when they may. */
export function policyDenial(rules: readonly ToolPolicyRule[], principal: PolicyPrincipal, tool: PolicyTool): string | undefined {
  const applying = rules.filter(rule => appliesTo(rule, principal) && rule.tools.some(pattern => patternMatches(pattern, tool)))
  const deny = applying.find(rule => rule.effect === 'deny')
  if (deny) return `denied by the tool policy${deny.name ? ` "${deny.name}"` : ''} for ${describe(principal)}`
  if (tool.groups && principal.role !== 'admin' && !tool.groups.some(group => principal.groups?.some(mine => mine.toLowerCase() === group.toLowerCase()))) {
    return `it is for the group${tool.groups.length > 1 ? 's' : ''} ${tool.groups.join(', ')}; ask an admin to add you`
  }
  if (applying.some(rule => rule.effect === 'allow')) return undefined
  if (principal.role === 'guest' && !isBuiltIn(tool)) return 'guests may use only the built-in tools unless the tool policy allows more; sign in to use it'
  if (principal.role === 'guest' && (tool.capabilities?.length ?? 0) > 0) return `guests may not use tools with ${tool.capabilities!.map(capability => capability.replaceAll('_', ' ')).join(', ')} unless the tool policy allows it; sign in to use it`
  return undefined
}

/** Whether an `approve` rule makes `principal`'s calls to `tool` wait for their approval. */
export function policyNeedsApproval(rules: readonly ToolPolicyRule[], principal: PolicyPrincipal, tool: PolicyTool): boolean {
  return rules.some(rule => rule.effect === 'approve' && appliesTo(rule, principal) && rule.tools.some(pattern => patternMatches(pattern, tool)))
}

/** Compiled into the build: the built-ins and the operator's server/tools files (not MCP or dynamic tools). */
function isBuiltIn(tool: PolicyTool): boolean {
  return !tool.source || tool.source.kind === 'builtin' || tool.source.kind === 'file'
}

function describe(principal: PolicyPrincipal): string {
  return principal.role === 'guest' ? 'guests' : principal.name ? `${principal.name} (${principal.role})` : `the ${principal.role} role`
}
