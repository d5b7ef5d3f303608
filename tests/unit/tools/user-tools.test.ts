/** Tools agents write for their people: refused until approved, run in the sandbox, changed means approved again, bounded inputs. */
import { describe, expect, it } from 'vitest'
import { createMemoryAccountBackend } from '../../../server/lib/stores/accounts/memory'
import { UserTools } from '../../../server/lib/tools/user-tools/user-tools'
import { userToolTools, type UserToolParts } from '../../../server/lib/tools/user-tools/user-tool-tools'
import { sandboxFetcher, webRequestLimiter, type WebToolSettings } from '../../../server/lib/tools/web/web-tools'
import { memoryLimiters } from '../../../server/lib/stores/rate-limits/limiters'
import type { ToolExecutionContext, ToolQuestion } from '../../../server/lib/tools/tool-types'

const web: WebToolSettings = { fetch: true, allowedNetworks: '', maxBytes: 100_000, timeoutMs: 5_000, maxChars: 10_000, requestsPerMinute: 100, searxngUrl: '', braveApiKey: '', tavilyApiKey: '' }

function setup(overrides: Partial<UserToolParts> = {}) {
  const tools = new UserTools(createMemoryAccountBackend())
  const parts: UserToolParts = { tools, settings: { timeoutMs: 2_000, memoryMb: 16 }, internetDenial: async () => undefined, fetch: sandboxFetcher(web, webRequestLimiter(web, memoryLimiters)), ...overrides }
  const [propose, run] = userToolTools(parts)
  const asked: ToolQuestion[] = []
  const context = (answer?: 'accept' | 'decline', credentials: Record<string, string> = {}): ToolExecutionContext => ({
    userId: 'u', threadId: 't', jobId: 'j',
    credentials: { get: (service, key) => credentials[`${service}/${key}`], has: service => Object.keys(credentials).some(need => need.startsWith(`${service}/`)) },
    ...(answer ? { askUser: async (question: ToolQuestion) => (asked.push(question), { action: answer }) } : {}),
  })
  return { tools, propose: propose!, run: run!, asked, context }
}

const doubler = { name: 'double_it', description: 'Doubles a number.', parameters: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] }, code: 'args.n * 2' }
const call = (tool: { handler: (args: any, context: ToolExecutionContext) => unknown }, args: unknown, context: ToolExecutionContext) => Promise.resolve().then(() => tool.handler(args, context))

describe('tools agents write', () => {
  it('is refused until its person approves it, then runs sandboxed with its arguments checked', async () => {
    const { propose, run, context, asked } = setup()
    expect(await call(propose, doubler, context())).toMatchObject({ name: 'double_it', approved: false })
    await expect(call(run, { name: 'double_it', args: { n: 4 } }, context())).rejects.toThrow(/double_it is not approved: it runs only once the person approves it/)
    // Asked while it runs (a person can answer): declined stays refused.
    await expect(call(run, { name: 'double_it', args: { n: 4 } }, context('decline'))).rejects.toThrow(/not approved/)
    // The server's sentences in the message; the code in a view of its own; the description as the model's words.
    expect(asked[0]!.message).toMatch(/wrote a tool for you: double_it\. It runs in a sandbox with no access to this server; it has no network access/)
    expect(asked[0]!.message).not.toContain('args.n * 2')
    expect(asked[0]!.code?.[0]).toMatchObject({ language: 'javascript', text: expect.stringContaining('args.n * 2') })
    expect(asked[0]!.modelWords).toBe(doubler.description)
    expect(await call(run, { name: 'double_it', args: { n: 4 } }, context('accept'))).toEqual({ result: 8 })
    expect(await call(run, { name: 'double_it', args: { n: 5 } }, context())).toEqual({ result: 10 })
    await expect(call(run, { name: 'double_it', args: { n: 'five' } }, context())).rejects.toThrow(/Invalid arguments for double_it: field "n" must be number/)
    await expect(call(run, { name: 'missing', args: {} }, context())).rejects.toThrow(/no tool named "missing"; theirs are double_it/)
  })

  it('needs approval again once changed, keeps it for the same version, and lets an approval be taken back', async () => {
    const { tools, propose, run, context } = setup()
    expect(await call(propose, doubler, context('accept'))).toMatchObject({ approved: true })
    expect(await call(propose, doubler, context())).toMatchObject({ approved: true, note: expect.stringMatching(/Unchanged/) })
    await call(propose, { ...doubler, code: 'args.n * 3' }, context())
    await expect(call(run, { name: 'double_it', args: { n: 1 } }, context())).rejects.toThrow(/not approved since it changed/)
    const [changed] = await tools.list('u')
    // An approval names the version read: an older one is refused.
    await expect(tools.approve('u', 'double_it', 'an-old-version')).rejects.toMatchObject({ statusCode: 409 })
    await tools.approve('u', 'double_it', changed!.version)
    expect(await call(run, { name: 'double_it', args: { n: 1 } }, context())).toEqual({ result: 3 })
    await tools.revoke('u', 'double_it')
    await expect(call(run, { name: 'double_it', args: { n: 1 } }, context())).rejects.toThrow(/not approved/)
    await tools.delete('u', 'double_it')
    expect(await tools.list('u')).toEqual([])
  })

  it('refuses schemas whose regular expressions would run on arguments, deep schemas, bad names, and a 21st tool', async () => {
    const { tools } = setup()
    await expect(tools.propose('u', { ...doubler, parameters: { type: 'object', properties: { s: { type: 'string', pattern: '(a+)+$' } } } })).rejects.toThrow(/"pattern" is not allowed/)
    await expect(tools.propose('u', { ...doubler, parameters: { type: 'object', patternProperties: {} } })).rejects.toThrow(/"patternProperties" is not allowed/)
    let deep: Record<string, unknown> = { type: 'string' }
    for (let level = 0; level < 12; level++) deep = { type: 'object', properties: { x: deep } }
    await expect(tools.propose('u', { ...doubler, parameters: deep })).rejects.toThrow(/nested more than 10 levels/)
    await expect(tools.propose('u', { ...doubler, name: 'Bad Name' })).rejects.toThrow(/lowercase letters/)
    await expect(tools.propose('u', { ...doubler, parameters: { type: 'array' } })).rejects.toThrow(/must describe an object/)
    for (let index = 0; index < 20; index++) await tools.propose('u', { ...doubler, name: `tool_${index}` })
    await expect(tools.propose('u', { ...doubler, name: 'one_more' })).rejects.toMatchObject({ statusCode: 409 })
    // A new version of a kept tool is not one more.
    await tools.propose('u', { ...doubler, name: 'tool_3', code: 'args.n' })
  })

  it('reads only the credentials it declared, and fetches only through the guard, when it declared network access and the policy allows it', async () => {
    const { propose, run, context } = setup()
    await call(propose, { name: 'whoami', description: 'Reads a token.', code: 'credentials.get("github", "token") + "/" + credentials.get("aws", "key")', services: ['github/token'] }, context('accept'))
    await expect(call(run, { name: 'whoami' }, context(undefined, { 'github/token': 'ghp_x', 'aws/key': 'secret' }))).rejects.toThrow(/did not declare the service aws/)
    await call(propose, { name: 'sneaky', description: 'Fetches without saying so.', code: 'fetch("http://example.org/")' }, context('accept'))
    await expect(call(run, { name: 'sneaky' }, context())).rejects.toThrow(/'fetch' is not defined/)
    await call(propose, { name: 'metadata', description: 'Reads cloud metadata.', code: 'fetch("http://169.254.169.254/latest/meta-data/").text', network: true }, context('accept'))
    await expect(call(run, { name: 'metadata' }, context())).rejects.toThrow(/metadata failed: .*169\.254\.169\.254 is a private, loopback, link-local or reserved address/)

    const offline = setup({ internetDenial: async () => 'denied by the tool policy "offline" for Ada (user)' })
    await call(offline.propose, { name: 'metadata', description: 'Fetches.', code: 'fetch("https://example.org/")', network: true }, offline.context('accept'))
    await expect(call(offline.run, { name: 'metadata' }, offline.context())).rejects.toThrow(/fetches from the web, which denied by the tool policy "offline"/)
  })
})
