/**
 * Every id a route takes (a path parameter, or a body field that names a record) is listed here
 * with how it is checked, and the route's file is read to see that it does check it that way. A
 * new route with a new parameter fails here until someone says how its id is kept to its owner.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('../../..', import.meta.url))
const api = join(root, 'server/api')

/** How a parameter's id is kept to its owner, and what its route's file must contain to do so. */
const CHECKS = {
  /** `requireOwned(event, kind, id)`: someone else's record answers 404 like an unknown id. */
  thread: /requireOwned\(event, 'thread'/,
  job: /requireOwned\(event, 'job'/,
  workflow: /requireOwned\(event, 'workflow'/,
  workflowRun: /requireOwned\(event, 'workflowRun'/,
  /** Looked up among the session user's own things only (the store is keyed by their id). */
  ownThing: /const user = await requireSessionUser\(event\)[\s\S]*user\.id/,
  /** A knowledge base opened for the session user (theirs, or shared with a group of theirs; else 404 like an unknown id), and a document looked up under it. */
  knowledge: /const user = await requireSessionUser\(event\)[\s\S]*usePersonal\(\)\.knowledge[\s\S]*\(user\.id, getRouterParam\(event, 'base'\)/,
  /** Admins' routes: any record, for an admin only. */
  admin: /requireSessionUser\(event, \{ role: 'admin' \}\)/,
  /** A capability: the id is a secret token, checked in constant time (share links, webhooks). */
  token: /getRouterParam\(event, 'token'\)/,
  /** One of the operator's identity providers, by its configured id (public: the sign-in page's buttons). */
  identityProvider: /signInSteps\.provider\.(start|finish)\(event\)/,
  /** A catch-all 404 for unknown API paths. */
  none: /./,
} satisfies Record<string, RegExp>

/** Each route's parameters by route (path under server/api, parameters in brackets), and their check. */
const ROUTE_PARAMETERS: Array<{ route: RegExp, parameter: string, check: keyof typeof CHECKS, note?: string }> = [
  { route: /^threads\/\[id\]/, parameter: 'id', check: 'thread' },
  { route: /^threads\/\[id\]\/messages\/\[messageId\]/, parameter: 'messageId', check: 'thread', note: 'a message of the owned conversation' },
  { route: /^threads\/\[id\]\/attachments\/\[attachmentId\]/, parameter: 'attachmentId', check: 'thread', note: 'a file of the owned conversation' },
  { route: /^threads\/\[id\]\/queue\/\[item\]/, parameter: 'item', check: 'thread', note: 'a queued message of the owned conversation (another thread\'s: 404)' },
  { route: /^jobs\/\[id\]/, parameter: 'id', check: 'job' },
  { route: /^jobs\/\[id\]\/input\/\[requestId\]/, parameter: 'requestId', check: 'job', note: 'looked up under the owned job' },
  { route: /^jobs\/\[id\]\/tool-calls\/\[callId\]/, parameter: 'callId', check: 'job', note: 'a tool call of the owned job' },
  { route: /^jobs\/\[id\]\/steps\/\[nodeId\]/, parameter: 'nodeId', check: 'job', note: 'a step of the owned workflow run' },
  { route: /^workflows\/\[id\]/, parameter: 'id', check: 'workflow' },
  { route: /^workflows\/\[id\]\/schedules\/\[scheduleId\]/, parameter: 'scheduleId', check: 'workflow', note: 'a schedule of the owned workflow' },
  { route: /^workflows\/\[id\]\/versions\/\[version\]/, parameter: 'version', check: 'workflow', note: 'a version of the owned workflow' },
  { route: /^workflows\/runs\/\[jobId\]/, parameter: 'jobId', check: 'workflowRun' },
  { route: /^folders\/\[id\]/, parameter: 'id', check: 'ownThing' },
  { route: /^knowledge\/\[base\]/, parameter: 'base', check: 'knowledge' },
  { route: /^knowledge\/\[base\]\/documents\/\[document\]/, parameter: 'document', check: 'knowledge', note: 'a document of the opened base' },
  { route: /^me\/presets\/\[id\]/, parameter: 'id', check: 'ownThing' },
  { route: /^me\/tools\/\[name\]/, parameter: 'name', check: 'ownThing' },
  { route: /^me\/memory\/\[id\]/, parameter: 'id', check: 'ownThing', note: 'a memory in the session user\'s own book (kept under their id)' },
  { route: /^me\/passkeys\/\[id\]/, parameter: 'id', check: 'ownThing', note: 'a passkey among the session user\'s own (kept under their id)' },
  { route: /^auth\/tokens\/\[id\]/, parameter: 'id', check: 'ownThing' },
  { route: /^credentials\/\[service\]/, parameter: 'service', check: 'ownThing' },
  { route: /^mcp-consents\/\[server\]/, parameter: 'server', check: 'ownThing' },
  { route: /^mcp-oauth\/\[server\]/, parameter: 'server', check: 'ownThing' },
  { route: /^shares\/\[id\]/, parameter: 'id', check: 'ownThing' },
  { route: /^push\/subscriptions\/\[id\]/, parameter: 'id', check: 'ownThing', note: 'a device among the session user\'s own (sealed under their id)' },
  { route: /^events\/\[streamId\]/, parameter: 'streamId', check: 'ownThing', note: 'an open live connection of the session user (another person\'s: 404)' },
  { route: /^admin\//, parameter: 'id', check: 'admin' },
  { route: /^admin\//, parameter: 'service', check: 'admin' },
  { route: /^admin\//, parameter: 'name', check: 'admin' },
  { route: /^shared\/\[token\]/, parameter: 'token', check: 'token' },
  { route: /^shared\/\[token\]\/attachments\/\[attachmentId\]/, parameter: 'attachmentId', check: 'token', note: 'a file of the shared snapshot' },
  { route: /^shared\/\[token\]\/artifacts\/\[messageId\]/, parameter: 'messageId', check: 'token', note: 'an answer of the shared snapshot' },
  { route: /^shared\/\[token\]\/artifacts\/\[messageId\]\/\[index\]/, parameter: 'index', check: 'token', note: 'a page among that answer\'s artifacts' },
  { route: /^threads\/\[id\]\/messages\/\[messageId\]\/artifacts\/\[index\]/, parameter: 'index', check: 'thread', note: 'a page among the owned conversation\'s answer\'s artifacts' },
  { route: /^hooks\/workflows\/\[token\]/, parameter: 'token', check: 'token' },
  { route: /^auth\/oidc\/\[provider\]/, parameter: 'provider', check: 'identityProvider' },
  { route: /^\[\.\.\.path\]/, parameter: '...path', check: 'none' },
]

/** Body fields that name a record, by route file, and their check. */
const BODY_IDS: Array<{ file: string, field: string, check: RegExp }> = [
  // The conversation a chat job works in (its workspace): server/utils/jobs.ts checks it.
  { file: 'server/utils/jobs.ts', field: '_threadId', check: /requireOwned\(event, 'thread', request\._threadId\)/ },
  { file: 'server/api/workflows/[id]/run.post.ts', field: 'rerunOf', check: /requireOwned\(event, 'workflowRun', body\.rerunOf\)/ },
  // The conversation whose workspace file goes into a knowledge base.
  { file: 'server/api/knowledge/[base]/workspace-files.post.ts', field: 'threadId', check: /requireOwned\(event, 'thread', input\.threadId\)/ },
  // The jobs a live connection is asked to carry: only the connection's person's own (else `job-gone`, like a 404).
  { file: 'server/lib/runtime/create-server-runtime.ts', field: 'watch[].jobId', check: /job\?\.userId === userId \? job : null/ },
]

function routeFiles(): string[] {
  return readdirSync(api, { withFileTypes: true, recursive: true })
    .filter(entry => entry.isFile() && entry.name.endsWith('.ts'))
    .map(entry => relative(api, join(entry.parentPath, entry.name)))
}

describe('every id a route takes is checked against its owner', () => {
  it('classifies every path parameter of every route, and each route file makes its check', () => {
    const unlisted: string[] = []
    const unchecked: string[] = []
    for (const file of routeFiles()) {
      const parameters = [...file.matchAll(/\[([^\]]+)\]/g)].map(match => match[1]!)
      const text = readFileSync(join(api, file), 'utf8')
      for (const parameter of parameters) {
        const rule = ROUTE_PARAMETERS.filter(item => item.parameter === parameter && item.route.test(file)).at(-1)
        if (!rule) unlisted.push(`${file}: [${parameter}]`)
        else if (!CHECKS[rule.check].test(text)) unchecked.push(`${file}: [${parameter}] should be checked as ${rule.check}`)
      }
    }
    expect(unlisted, 'a route parameter nobody said how to check').toEqual([])
    expect(unchecked).toEqual([])
  })

  it('checks the body fields that name a record', () => {
    for (const { file, field, check } of BODY_IDS) {
      expect(readFileSync(join(root, file), 'utf8'), `${file} checks ${field}`).toMatch(check)
    }
  })

  it('knows each route it lists (no rule outlives its routes)', () => {
    const files = routeFiles()
    for (const rule of ROUTE_PARAMETERS) expect(files.some(file => rule.route.test(file) && file.includes(`[${rule.parameter}]`)), `${rule.route} [${rule.parameter}]`).toBe(true)
  })
})
