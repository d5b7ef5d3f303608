/**
 * The SCIM 2.0 service an identity provider provisions this server through (`/scim/v2/…`, a
 * bearer token of the operator's): Users and Groups (scim-users.ts, scim-groups.ts) and the
 * discovery resources (ServiceProviderConfig, ResourceTypes, Schemas). One request in, a status
 * and a body out; the route does the transport (server/utils/scim.ts).
 */
import type { AccountService } from '../accounts'
import type { AccountStore } from '../../stores/accounts/account-store'
import type { SettingsStore } from '../../stores/settings/settings-store'
import { ScimGroups } from './scim-groups'
import { asScimError, ScimError, scimList, scimListQuery, SCIM_MAX_PAGE, SCIM_SCHEMAS } from './scim-protocol'
import { ScimUsers } from './scim-users'

/** One SCIM request, as the route read it. */
export interface ScimRequest {
  method: string
  /** The path under `/scim/v2`, e.g. `Users/abc`. */
  path: string
  query: Record<string, unknown>
  body: unknown
  /** The absolute URL of `/scim/v2`, for the resources' locations. */
  base: string
}

export interface ScimProvisioningParts {
  accounts: AccountService
  accountStore: Pick<AccountStore, 'createAccount' | 'getAccount' | 'findAccountByName' | 'listAccounts'>
  settings: Pick<SettingsStore, 'getSetting' | 'setSetting' | 'deleteSettings'>
  /** Stops a person's running answers and workflow runs (they were deactivated). */
  stopJobs: (userId: string) => Promise<void>
  role: 'user' | 'admin'
  breakGlassAdmin?: string
  maxAccounts: number
}

function discovery(path: string, base: string) {
  const resourceType = (name: 'User' | 'Group') => ({
    schemas: [SCIM_SCHEMAS.resourceType], id: name, name, endpoint: `/${name}s`, schema: name === 'User' ? SCIM_SCHEMAS.user : SCIM_SCHEMAS.group,
    meta: { resourceType: 'ResourceType', location: `${base}/ResourceTypes/${name}` },
  })
  switch (path) {
    case 'ServiceProviderConfig': return {
      schemas: [SCIM_SCHEMAS.serviceProviderConfig],
      patch: { supported: true },
      bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
      filter: { supported: true, maxResults: SCIM_MAX_PAGE },
      changePassword: { supported: false },
      sort: { supported: false },
      etag: { supported: false },
      authenticationSchemes: [{ type: 'oauthbearertoken', name: 'Bearer token', description: 'The token set in NUXT_AUTH_SCIM_TOKEN.', primary: true }],
      meta: { resourceType: 'ServiceProviderConfig', location: `${base}/ServiceProviderConfig` },
    }
    case 'ResourceTypes': return scimList([resourceType('User'), resourceType('Group')], 2, 1)
    case 'ResourceTypes/User': return resourceType('User')
    case 'ResourceTypes/Group': return resourceType('Group')
    case 'Schemas': return scimList([
      { id: SCIM_SCHEMAS.user, name: 'User', attributes: ['userName', 'externalId', 'name', 'displayName', 'emails', 'active', 'groups'].map(name => ({ name })) },
      { id: SCIM_SCHEMAS.group, name: 'Group', attributes: ['displayName', 'externalId', 'members'].map(name => ({ name })) },
    ], 2, 1)
    default: return undefined
  }
}

export class ScimProvisioning {
  readonly users: ScimUsers
  readonly groups: ScimGroups

  constructor(parts: ScimProvisioningParts) {
    const { accounts, accountStore, settings } = parts
    this.groups = new ScimGroups({
      groups: accounts.groups,
      settings,
      accountExists: async id => (await accountStore.getAccount(id)) !== null,
      nameOf: async id => (await accountStore.getAccount(id))?.name ?? null,
    })
    this.users = new ScimUsers({
      accounts: accountStore,
      settings,
      setDisabled: async (id, disabled) => {
        await asScimError(accounts.updateAccount(id, { disabled }))
      },
      stopJobs: parts.stopJobs,
      deleteAccount: async (id) => {
        await this.groups.forgetMember(id, (await accounts.groups.membershipOf(id)).scim)
        return asScimError(accounts.deleteAccount(id))
      },
      groupsOf: async id => this.groups.groupsOf(id, (await accounts.groups.membershipOf(id)).scim),
      role: parts.role,
      maxAccounts: parts.maxAccounts,
      ...(parts.breakGlassAdmin ? { breakGlassAdmin: parts.breakGlassAdmin } : {}),
    })
  }

  /** Answers one request (a ScimError for what it refuses). */
  async answer(request: ScimRequest): Promise<{ status: number, body: unknown }> {
    const [collection, id, ...rest] = request.path.split('/').filter(Boolean)
    const method = request.method.toUpperCase()
    const found = method === 'GET' ? discovery([collection, id].filter(Boolean).join('/'), request.base) : undefined
    if (found) return { status: 200, body: found }
    if ((collection !== 'Users' && collection !== 'Groups') || rest.length > 0) throw new ScimError(404, `There is no ${request.path.slice(0, 100)} here: Users, Groups, ServiceProviderConfig, ResourceTypes and Schemas are.`)
    const query = scimListQuery(request.query)
    const service = collection === 'Users' ? this.users : this.groups
    const ok = (body: unknown, status = 200) => ({ status, body })
    if (!id) {
      if (method === 'GET') return ok(await service.list(query, request.base))
      if (method === 'POST') return ok(await service.create(request.body, request.base), 201)
    } else {
      if (method === 'GET') return ok(collection === 'Groups' ? await this.groups.get(id, request.base, query.withoutMembers) : await this.users.get(id, request.base))
      if (method === 'PUT') return ok(await service.replace(id, request.body, request.base))
      if (method === 'PATCH') return ok(await service.patch(id, request.body, request.base))
      if (method === 'DELETE') {
        await service.remove(id)
        return { status: 204, body: null }
      }
    }
    throw new ScimError(405, `${method} is not answered at ${request.path.slice(0, 100)}.`)
  }
}
