/**
 * What goes wrong with a person's authorisation of an MCP server, in words that say what to do: a
 * call that needs the person to connect (or re-authorise) in Settings, and a connect or callback
 * request that cannot be done as asked.
 */
import { OAuthError } from '@modelcontextprotocol/client'
import { DomainError, type HttpAnswer } from '../../../domain-error'
import type { McpOAuthGrant } from './grant'

/** Settings' section for connections (tool errors and the tool card link there). */
export const CONNECTIONS_SETTINGS = '/settings#connections'
/** Characters of an authorization server's error text kept. */
export const MAX_PROBLEM_CHARS = 300

/** A call that cannot go out without the person's authorisation; the message says where to give it. */
export class McpAuthorizationRequired extends Error {
  override name = 'McpAuthorizationRequired'
  /** `scope`: the wider access the server asked for, when that is why. */
  constructor(readonly server: string, readonly reason: 'connect' | 'reauthorize', problem?: string, readonly scope?: string) {
    super(reason === 'connect'
      ? `MCP server "${server}" needs the user's authorisation. Tell the user to connect it in Settings → Connections (${CONNECTIONS_SETTINGS}) and ask again.`
      : scope
        ? `MCP server "${server}" needs more access than the user authorised (scope "${scope}"). Tell the user to re-authorise it in Settings → Connections (${CONNECTIONS_SETTINGS}) and ask again.`
        : `The user's authorisation for MCP server "${server}" expired or was revoked${problem ? ` (${problem})` : ''}. Tell the user to re-authorise it in Settings → Connections (${CONNECTIONS_SETTINGS}) and ask again.`)
  }

  static isInstance(error: unknown): error is McpAuthorizationRequired {
    return error instanceof Error && error.name === 'McpAuthorizationRequired'
  }
}

/** A connect or callback request that cannot be done as asked (answered 4xx or 502 with this message). */
export class McpOAuthFlowError extends DomainError {
  override name = 'McpOAuthFlowError'
  constructor(readonly statusCode: 400 | 403 | 404 | 502, message: string) {
    super(message)
  }

  httpAnswer(): HttpAnswer {
    const statusMessage = this.statusCode === 502 ? 'Authorization server problem' : this.statusCode === 404 ? 'No such MCP server' : 'Authorisation refused'
    return { statusCode: this.statusCode, statusMessage, message: this.message }
  }

  static isInstance(error: unknown): error is McpOAuthFlowError {
    return error instanceof Error && error.name === 'McpOAuthFlowError'
  }
}

/** An authorization server's refusal (or any error) in a line a person can read, bounded. */
export function describeOAuthError(error: unknown): string {
  const text = error instanceof OAuthError ? `${error.code}${error.message ? `: ${error.message}` : ''}` : error instanceof Error ? error.message : String(error)
  return text.slice(0, MAX_PROBLEM_CHARS)
}

/** What a call of someone whose grant is not usable is told: connect, or re-authorise after a refused refresh. */
export function authorizationRequired(server: string, grant: McpOAuthGrant | undefined): McpAuthorizationRequired {
  return new McpAuthorizationRequired(server, grant?.status === 'reauthorize' ? 'reauthorize' : 'connect', grant?.problem, grant?.status === 'reauthorize' ? grant.requiredScope : undefined)
}
