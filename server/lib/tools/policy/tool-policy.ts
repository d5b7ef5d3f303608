/**
 * The tool policy in force: the operator's rules (a JSON or YAML file, `tools.policyFile`,
 * validated at start-up) followed by the admin's (edited on the Admin page, kept in the account
 * store's settings so every instance reads the same). Deny wins wherever a rule sits. Read before
 * every model request of a job, so the effective rules are cached for a few seconds: an admin's
 * change reaches this instance at once and the others within `CACHE_MS`, and a running job from
 * its next round.
 */
import type { RegisteredServerTool } from '../tool-types'
import { readOperatorFile } from '../../config/operator-file'
import type { SettingsReadWrite } from '../../stores/settings/settings-store'
import { policyDenial, policyNeedsApproval, toolPolicySchema, type PolicyPrincipal, type PolicyTool, type ToolPolicyRule } from './rules'
import type { ToolPolicyView } from '../../../../shared/types/tool-policy'
import { getServerTool } from '../registry'
import { DomainError, type HttpAnswer } from '../../domain-error'

const SETTING = 'tool-policy'
const CACHE_MS = 5_000

/** A policy file that cannot be used; the message names the file and the rule. */
export class ToolPolicyError extends Error {
  override name = 'ToolPolicyError'
}

/** The refusal of a policy change an admin sent, with what to fix. */
export class ToolPolicyInputError extends DomainError {
  override name = 'ToolPolicyInputError'
  httpAnswer(): HttpAnswer {
    return { statusCode: 400, statusMessage: 'Invalid tool policy', message: this.message }
  }

  static isInstance(error: unknown): error is ToolPolicyInputError {
    return error instanceof Error && error.name === 'ToolPolicyInputError'
  }
}

function problemsOf(issues: ReadonlyArray<{ path: PropertyKey[], message: string }>): string {
  return issues.map(issue => `- ${issue.path.length > 0 ? issue.path.map(String).join('.') : 'the policy'}: ${issue.message}`).join('\n')
}

/** Reads and validates the policy file at `path` (`.yaml`/`.yml` as YAML, anything else as JSON). */
export function loadToolPolicyFile(path: string): ToolPolicyRule[] {
  const raw = readOperatorFile(path, { name: 'tool policy', variable: 'NUXT_TOOLS_POLICY_FILE' }, message => new ToolPolicyError(message))
  const parsed = toolPolicySchema.safeParse(raw)
  if (!parsed.success) throw new ToolPolicyError(`Invalid tool policy ${path}:\n${problemsOf(parsed.error.issues)}`)
  return parsed.data.rules
}

/** A check for one principal: why a tool is denied to them, or undefined. */
export interface ToolAccessCheck {
  (tool: PolicyTool): string | undefined
  /** Whether an `approve` rule makes their calls to `tool` wait for their approval. */
  needsApproval?: (tool: PolicyTool) => boolean
}

/** What the policy looks at of the registered tool `name` (its name alone when none is registered). */
export function policyToolNamed(name: string, get: (name: string) => RegisteredServerTool | undefined = getServerTool): PolicyTool {
  const tool = get(name)
  return { name, source: tool?.source, capabilities: tool?.capabilities, ...(tool?.groups ? { groups: tool.groups } : {}) }
}

/**
 * Whether a call to `name` waits for its user's approval: the tool asks for it (`needsApproval`),
 * or an `approve` rule of `access` does. The one answer for chat tool loops and workflow tool steps.
 */
export function approvalNeeded(name: string, access: ToolAccessCheck | undefined, get: (name: string) => RegisteredServerTool | undefined = getServerTool): boolean {
  return get(name)?.needsApproval === true || access?.needsApproval?.(policyToolNamed(name, get)) === true
}

export class ToolPolicy {
  private cached: { rules: ToolPolicyRule[], adminRules: ToolPolicyRule[], at: number } | undefined

  constructor(private readonly settings: SettingsReadWrite, private readonly fileRules: readonly ToolPolicyRule[], private readonly fileName: string | null, private readonly now: () => number = Date.now) {}

  /** The check for `principal` under the rules in force now. */
  async accessFor(principal: PolicyPrincipal): Promise<ToolAccessCheck> {
    const { rules } = await this.load()
    return Object.assign((tool: PolicyTool) => policyDenial(rules, principal, tool), { needsApproval: (tool: PolicyTool) => policyNeedsApproval(rules, principal, tool) })
  }

  /** The file's rules, the admin's, for the admin page. */
  async view(): Promise<ToolPolicyView> {
    const { adminRules } = await this.load()
    return { fileRules: [...this.fileRules], file: this.fileName, adminRules }
  }

  /** Replaces the admin's rules (400 naming the rule and field when one does not fit). */
  async setAdminRules(input: unknown): Promise<ToolPolicyView> {
    const parsed = toolPolicySchema.safeParse(input)
    if (!parsed.success) throw new ToolPolicyInputError(`The tool policy has problems:\n${problemsOf(parsed.error.issues)}`)
    await this.settings.setSetting(SETTING, JSON.stringify(parsed.data))
    this.cached = { adminRules: parsed.data.rules, rules: [...this.fileRules, ...parsed.data.rules], at: this.now() }
    return this.view()
  }

  private async load(): Promise<{ rules: ToolPolicyRule[], adminRules: ToolPolicyRule[] }> {
    if (this.cached && this.now() - this.cached.at < CACHE_MS) return this.cached
    const adminRules = parseStored(await this.settings.getSetting(SETTING))
    this.cached = { adminRules, rules: [...this.fileRules, ...adminRules], at: this.now() }
    return this.cached
  }
}

/**
 * A stored value that no longer parses (an older shape) must not open what it closed: it reads
 * as one rule that denies MCP and dynamic tools to everyone but admins until an admin saves again.
 */
const UNREADABLE: ToolPolicyRule[] = [{ name: 'unreadable admin policy: save it again on the Admin page', effect: 'deny', tools: ['source:mcp', 'source:dynamic'], roles: ['user', 'guest'] }]

function parseStored(stored: string | null): ToolPolicyRule[] {
  if (!stored) return []
  try {
    const parsed = toolPolicySchema.safeParse(JSON.parse(stored))
    return parsed.success ? parsed.data.rules : UNREADABLE
  } catch {
    return UNREADABLE
  }
}
