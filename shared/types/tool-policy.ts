import type { Role } from './account'

/**
 * One tool access rule: allow or deny tool patterns (names, globs such as `github__*`, or sources:
 * `source:builtin`, `source:file`, `source:dynamic`, `source:mcp`, `source:mcp/<server>`) for roles,
 * groups and/or users (none: everyone). Deny wins. `approve` allows nothing by itself: a call it
 * matches waits for its user's approval.
 */
export interface ToolPolicyRule {
  /** Shown in refusals ("denied by the tool policy <name>"). */
  name?: string
  effect: 'allow' | 'deny' | 'approve'
  tools: string[]
  roles?: Role[]
  /** Account names (case does not matter) or ids. */
  users?: string[]
  /** Groups (case does not matter). */
  groups?: string[]
}

/** `GET /api/admin/tool-policy`: the operator's rules (read-only) and the admin's. */
export interface ToolPolicyView {
  /** The operator's policy file, when one is set. */
  file: string | null
  fileRules: ToolPolicyRule[]
  adminRules: ToolPolicyRule[]
}
