import type { H3Event } from 'h3'
import { z } from 'zod'
import { startedServerRuntime } from '../lib/runtime/current'
import { isBearerToken } from '../lib/security/bearer-token'
import { ScimError, scimErrorBody, SCIM_CONTENT_TYPE } from '../lib/auth/scim/scim-protocol'

/** Most bytes of one SCIM request's body (a group's PATCH of 1,000 members is ~60 kB). */
const SCIM_BODY_BYTES = 512 * 1024

const send = (event: H3Event, status: number, body: unknown) => {
  setResponseStatus(event, status)
  if (body === null) return null
  setResponseHeader(event, 'Content-Type', SCIM_CONTENT_TYPE)
  return body
}

/**
 * Answers a request under `/scim/v2` (an identity provider provisioning people and groups): 404
 * when provisioning is off, 401 without the operator's token, else the SCIM service's answer, every
 * refusal in SCIM's error form.
 */
export async function answerScim(event: H3Event): Promise<unknown> {
  const scim = startedServerRuntime().scim
  if (!scim) return send(event, 404, scimErrorBody(404, 'Provisioning is off on this server: set NUXT_AUTH_SCIM_TOKEN to turn it on.'))
  if (!isBearerToken(getRequestHeader(event, 'authorization'), useServerConfig(event).auth.scimToken)) {
    setResponseHeader(event, 'WWW-Authenticate', 'Bearer realm="scim"')
    return send(event, 401, scimErrorBody(401, 'Send the provisioning token as "Authorization: Bearer <token>".'))
  }
  try {
    const method = event.method.toUpperCase()
    const body = method === 'POST' || method === 'PUT' || method === 'PATCH' ? await readJsonBody(event, z.unknown(), { maxBytes: SCIM_BODY_BYTES }) : undefined
    const url = getRequestURL(event)
    const base = `${useServerConfig(event).siteUrl || url.origin}/scim/v2`
    const answer = await scim.answer({ method, path: getRouterParam(event, 'path') ?? '', query: getQuery(event), body, base })
    return send(event, answer.status, answer.body)
  } catch (error) {
    if (error instanceof ScimError) return send(event, error.status, scimErrorBody(error.status, error.message, error.scimType))
    const status = (error as { statusCode?: number }).statusCode
    // The body reader's and the account service's refusals (413, 415, 400; 409 for the last admin) in SCIM's form; anything else is a 500.
    if (status && status >= 400 && status < 500) return send(event, status, scimErrorBody(status, (error as { statusMessage?: string, message?: string }).statusMessage ?? (error as Error).message))
    throw error
  }
}
