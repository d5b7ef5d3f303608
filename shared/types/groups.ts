/** Groups of people (made by an admin, or kept in step with an identity provider's groups claim) and what each may use. */
import type { RoleLimits } from './limits'

/** A group and the limits it gives its members (a field left out gives nothing beyond the role's). */
export interface Group {
  /** 1-64 letters, digits, spaces, `.`, `_` or `-`; as a provider's groups claim names it. */
  name: string
  description: string
  limits: Partial<RoleLimits>
  /** The model its members' new chats start with, unless they chose their own default. */
  defaultModel?: string
  /** Instructions every answer of its members is given (before the chat's or the person's own). */
  instructions?: string
  createdAt: number
}

/** What a person's groups set for their chats (`GET /api/me/preferences` says the model as `teamDefaultModel`). */
export interface TeamChatSettings {
  /** The first of their groups (by name) with a default model. */
  defaultModel?: string
  /** Each group's instructions, by group name. */
  instructions?: string
}

/** Where a person's groups come from. */
export interface GroupMembership {
  /** Set by an admin. */
  manual: string[]
  /** From the identity provider's groups claim at the last sign-in. */
  provider: string[]
  /** Given by the identity provider's provisioning (SCIM). */
  scim: string[]
}

/** A person's limits with where each comes from: the role, or the group that gives more. */
export interface EffectiveLimits {
  limits: RoleLimits
  /** Per field: `role:<role>` or `group:<name>`. */
  sources: Record<keyof RoleLimits, string>
  groups: string[]
}

/** `GET /api/admin/users/:id/groups`: where an account's groups come from, and its limits with their sources. */
export interface AccountGroupView extends EffectiveLimits {
  membership: GroupMembership
}
