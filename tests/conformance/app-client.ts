/**
 * The app's own MCP client as the official conformance suite's client under test
 * (`@modelcontextprotocol/conformance`, see mcp-client.test.ts beside it). The suite starts a scenario's
 * server, runs this script with its URL as the last argument and the scenario's name (and, for
 * some, a context of pre-registered client details) in the environment, and judges what the
 * server saw. Nothing here talks MCP itself: the connection, the OAuth flows and the tool calls
 * are the app's (`McpServers`, `McpAuthorizations`, `executeServerTool`); this script only plays
 * the person who clicks "Connect" in Settings and approves on the authorization server's page.
 */
import { McpServers } from '../../server/lib/tools/mcp/servers'
import type { McpAuthorizations } from '../../server/lib/tools/mcp/oauth/authorizations'
import { McpAuthorizationRequired } from '../../server/lib/tools/mcp/oauth/errors'
import { parseMcpConfig, type McpServerConfig } from '../../server/lib/tools/mcp/config'
import { createMemoryAccountBackend } from '../../server/lib/stores/accounts/memory'
import { createSecretBox } from '../../server/lib/security/secret-box'
import { executeServerTool } from '../../server/lib/tools/execute-tool'
import { getEnabledDefinitions } from '../../server/lib/tools/registry'
import type { ToolQuestion } from '../../server/lib/tools/tool-types'

const SERVER = 'conformance'
const USER = 'ada'
/** The app's origin as the browser would reach it: the callback goes there (the suite's authorization server redirects without calling it). */
const APP_ORIGIN = 'http://localhost:3000'
const noCredentials = { get: () => undefined, has: () => false }

const log = (message: string) => process.stderr.write(`${message}\n`)
const logger = { info: log, warn: log }

interface ConformanceContext {
  name?: string
  client_id?: string
  client_secret?: string
  private_key_pem?: string
  signing_algorithm?: string
}

/** The server entry the operator would write for this scenario (the config file's shape). */
function serverEntry(url: string, scenario: string, context: ConformanceContext): Record<string, unknown> {
  const entry: Record<string, unknown> = { url, timeoutMs: 10_000, pingIntervalMs: 0 }
  if (!scenario.startsWith('auth/')) return entry
  if (scenario === 'auth/client-credentials-basic') return { ...entry, oauth: { grant: 'client_credentials', clientId: context.client_id, clientSecret: context.client_secret } }
  if (scenario === 'auth/client-credentials-jwt') return { ...entry, oauth: { grant: 'client_credentials', clientId: context.client_id, privateKey: context.private_key_pem, signingAlgorithm: context.signing_algorithm ?? 'ES256' } }
  if (scenario === 'auth/pre-registration') return { ...entry, oauth: { clientId: context.client_id, clientSecret: context.client_secret } }
  // The well-behaved client's URL client id, used where the authorization server supports client ID metadata documents.
  return { ...entry, oauth: { clientMetadataUrl: 'https://conformance-test.local/client-metadata.json' } }
}

/** Plays the person: Connect in Settings, approve on the authorization server's page, back to the callback. */
async function authorise(authorizations: McpAuthorizations): Promise<void> {
  const url = await authorizations.begin(USER, SERVER, APP_ORIGIN)
  const answer = await fetch(url, { redirect: 'manual' })
  const location = answer.headers.get('location')
  if (!location) throw new Error(`The authorization server did not redirect back (HTTP ${answer.status})`)
  const back = new URL(location)
  await authorizations.complete(USER, Object.fromEntries(back.searchParams))
  log(`authorised for ${SERVER}`)
}

/** A tool call as a job makes it; a person asked to (re-)authorise does so, at most `reauthorisations` times. */
async function call(servers: McpServers, authorizations: McpAuthorizations | undefined, tool: string, args: Record<string, unknown>, reauthorisations = 2): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    if (authorizations) await servers.discoverFor(USER, noCredentials)
    const name = `${SERVER}__${tool}`
    const result = await executeServerTool(name, JSON.stringify(args), {
      userId: USER,
      credentials: noCredentials,
      // The person accepts a form with nothing filled in: the schema's defaults apply.
      askUser: async (_question: ToolQuestion) => ({ action: 'accept', content: {} }),
    })
    if (result.result !== null) return result.result
    const needsPerson = /authoris/i.test(result.error ?? '')
    if (!authorizations || !needsPerson || attempt >= reauthorisations) throw new Error(result.error ?? 'the call failed')
    log(`the call asked for the person's authorisation: ${result.error}`)
    await authorise(authorizations)
  }
}

async function main(): Promise<void> {
  const url = process.argv.at(-1)!
  const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? ''
  const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}') as ConformanceContext
  const [config] = parseMcpConfig({ mcpServers: { [SERVER]: serverEntry(url, scenario, context) } }, 'the conformance scenario') as [McpServerConfig]

  const perPerson = config.transport === 'http' && config.oauth && (config.oauth === true || config.oauth.grant !== 'client_credentials')
  const servers = new McpServers({
    logger,
    connectTimeoutMs: 15_000,
    ...(perPerson ? { oauth: { store: createMemoryAccountBackend(), secretBox: createSecretBox('conformance-secret-conformance-secret', 'mcp-oauth-grants'), logger } } : {}),
  })
  const authorizations = servers.authorizations
  try {
    await servers.apply([{ config, origin: 'file' }])
    if (authorizations) await authorise(authorizations)
    else await waitForTools(servers)
    if (scenario === 'tools_call') log(await call(servers, authorizations, 'add_numbers', { a: 5, b: 3 }))
    else if (scenario === 'elicitation-sep1034-client-defaults') log(await call(servers, authorizations, 'test_client_elicitation_defaults', {}))
    else if (scenario === 'sse-retry') log(await call(servers, authorizations, 'test_reconnection', {}))
    else if (scenario.startsWith('auth/')) {
      await servers.discoverFor(USER, noCredentials)
      const tool = getEnabledDefinitions().map(definition => definition.function.name).find(name => name.startsWith(`${SERVER}__`))
      if (tool) log(await call(servers, authorizations, tool.slice(SERVER.length + 2), {}))
    }
  } finally {
    await servers.close()
  }
}

/** A shared connection's tools, once it is ready (or why it is not). */
async function waitForTools(servers: McpServers): Promise<void> {
  const deadline = Date.now() + 15_000
  while (Date.now() < deadline) {
    const [status] = servers.statuses()
    if (status?.state === 'ready') return
    if (status?.state === 'failed') throw new Error(`the server failed: ${status.error}`)
    await new Promise(resolve => setTimeout(resolve, 25))
  }
  throw new Error('the server was not ready in time')
}

main().then(() => process.exit(0), (error: unknown) => {
  log(`error: ${McpAuthorizationRequired.isInstance(error) ? error.message : error instanceof Error ? error.stack : String(error)}`)
  process.exit(1)
})
