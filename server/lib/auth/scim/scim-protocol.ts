/**
 * SCIM 2.0 (RFC 7643, 7644) as this server speaks it to an identity provider that provisions
 * people and groups (Entra ID, Okta): its schema names, errors, list answers and the bounded
 * reading of a list request's query.
 */
import { AuthError } from '../auth-errors'

export const SCIM_CONTENT_TYPE = 'application/scim+json'

export const SCIM_SCHEMAS = {
  user: 'urn:ietf:params:scim:schemas:core:2.0:User',
  enterpriseUser: 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User',
  group: 'urn:ietf:params:scim:schemas:core:2.0:Group',
  list: 'urn:ietf:params:scim:api:messages:2.0:ListResponse',
  patch: 'urn:ietf:params:scim:api:messages:2.0:PatchOp',
  error: 'urn:ietf:params:scim:api:messages:2.0:Error',
  serviceProviderConfig: 'urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig',
  resourceType: 'urn:ietf:params:scim:schemas:core:2.0:ResourceType',
} as const

/** Most resources one page of a list answers. */
export const SCIM_MAX_PAGE = 200

/** SCIM's error types (RFC 7644 §3.12) this server answers with. */
export type ScimErrorType = 'invalidFilter' | 'invalidValue' | 'invalidSyntax' | 'invalidPath' | 'noTarget' | 'uniqueness' | 'mutability' | 'tooMany'

/** A refusal in SCIM's own form: its status, type and what to fix. */
export class ScimError extends Error {
  override name = 'ScimError'
  constructor(readonly status: number, message: string, readonly scimType?: ScimErrorType) {
    super(message)
  }
}

/** `work`, with the account service's refusals as SCIM errors: a name taken is `uniqueness`, the last active admin `mutability`. */
export async function asScimError<T>(work: Promise<T>): Promise<T> {
  try {
    return await work
  } catch (error) {
    if (!(error instanceof AuthError)) throw error
    throw new ScimError(error.statusCode, error.message, error.refusal === 'name-taken' ? 'uniqueness' : error.statusCode === 409 ? 'mutability' : undefined)
  }
}

/** An error's body as SCIM clients read it. */
export function scimErrorBody(status: number, detail: string, scimType?: ScimErrorType) {
  return { schemas: [SCIM_SCHEMAS.error], status: String(status), ...(scimType ? { scimType } : {}), detail }
}

/** A page of resources as a list answer. */
export function scimList<T>(resources: T[], totalResults: number, startIndex: number) {
  return { schemas: [SCIM_SCHEMAS.list], totalResults, startIndex, itemsPerPage: resources.length, Resources: resources }
}

/** What a list request asks for: its filter, and the page (startIndex from 1, at most SCIM_MAX_PAGE). */
export interface ScimListQuery {
  filter?: string
  startIndex: number
  count: number
  /** `excludedAttributes=members`: a group's members are left out (Entra asks so). */
  withoutMembers: boolean
}

const whole = (value: unknown, fallback: number) => {
  const number = typeof value === 'string' && /^-?\d{1,9}$/.test(value) ? Number(value) : fallback
  return Number.isSafeInteger(number) ? number : fallback
}

/** A list request's query, bounded (a page past the end is empty, a count over the most is the most). */
export function scimListQuery(query: Record<string, unknown>): ScimListQuery {
  const filter = typeof query.filter === 'string' && query.filter.trim() !== '' ? query.filter : undefined
  const excluded = typeof query.excludedAttributes === 'string' ? query.excludedAttributes.toLowerCase().split(',').map(item => item.trim()) : []
  return {
    ...(filter ? { filter } : {}),
    startIndex: Math.max(1, whole(query.startIndex, 1)),
    count: Math.min(SCIM_MAX_PAGE, Math.max(0, whole(query.count, 100))),
    withoutMembers: excluded.includes('members'),
  }
}

/** The one page of `items` a list query asks for. */
export function scimPage<T>(items: readonly T[], query: ScimListQuery): T[] {
  return items.slice(query.startIndex - 1, query.startIndex - 1 + query.count)
}
