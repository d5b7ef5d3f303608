import { describe, expect, it } from 'vitest'
import { ImageTool, type ImageMaker, type ImageSettings } from '../../../server/lib/images/image-tool'
import { drawScene, sceneFor, sceneOf } from '../../../server/lib/images/demo-drawing'
import { createMemoryThreadStore } from '../../../server/lib/stores/threads/memory'
import { memoryLimiters } from '../../../server/lib/stores/rate-limits/limiters'
import { imagesMadeBy } from '../../../server/lib/threads/write-back'
import { generatedImagesOf } from '../../../shared/images'
import { planDemoReply } from '../../../server/lib/models/demo/demo-planner'
import type { ToolExecutionContext } from '../../../server/lib/tools/tool-types'
import type { BackgroundJob } from '../../../shared/types/job'
import { fakePng, useFakeOpenRouter } from '../../support/fake-openrouter'

const fake = useFakeOpenRouter()
const settings: ImageSettings = { model: 'fake/image-model', maxImageBytes: 1024 * 1024, imagesPerAnswer: 2, perHour: 3, timeoutMs: 10_000 }
const retry = { maxRetries: 0, baseDelayMs: 1, maxRetryAfterMs: 1, headersTimeoutMs: 5_000 }

async function setUp(options: { maker?: ImageMaker, left?: { tokens: number, cost: number }, quota?: number } = {}) {
  const threads = createMemoryThreadStore()
  const thread = await threads.createThread({ userId: 'ana' })
  const spent: unknown[] = []
  const tool = new ImageTool(settings, {
    threads,
    quotas: { threadsPerUser: 100, messagesPerThread: 100, workflowsPerUser: 10, attachmentBytesPerUser: options.quota ?? 0 },
    limiterFor: memoryLimiters,
    client: { retry },
    makerFor: async () => options.maker ?? { endpoint: { baseUrl: fake.url, apiKey: 'sk-image', label: 'Fake' }, model: 'fake/image-model' },
    budget: { left: async () => options.left ?? { tokens: Infinity, cost: Infinity }, record: async (_userId, used) => void spent.push(used) },
  }).module()
  const context = (call: string, userId = 'ana'): ToolExecutionContext => ({ userId, threadId: thread.id, jobId: 'job-1', toolCallId: call, credentials: { get: () => undefined, has: () => false } })
  const run = async (args: Record<string, unknown>, ctx: ToolExecutionContext) => await tool.handler(args, ctx) as { images: Array<{ id: string, mediaType: string, size: number }>, prompt: string, modelText?: string, note: string }
  return { threads, thread, tool, context, run, spent }
}

describe('generate_image', () => {
  it('asks the image model with modalities, keeps the PNG as the conversation\'s file, counts its cost, and finds it again on a re-run', async () => {
    fake.imageReply('png')
    const { threads, thread, run, context, spent } = await setUp()
    const before = fake.imageRequests.length
    const result = await run({ prompt: 'an orange square' }, context('call-1'))
    expect(fake.imageRequests.slice(before)).toEqual([{ authorization: 'Bearer sk-image', model: 'fake/image-model', prompt: 'an orange square', sourceImages: 0 }])
    expect(result.images).toEqual([expect.objectContaining({ mediaType: 'image/png', kind: 'image', name: 'an-orange-square.png', size: fakePng().byteLength })])
    expect(result.modelText).toBe('Here is an orange square.')
    expect(result.note).toContain('edit')
    const stored = await threads.readAttachment(result.images[0]!.id)
    expect(stored).toMatchObject({ threadId: thread.id, userId: 'ana' })
    expect(Buffer.from(stored!.bytes).equals(fakePng())).toBe(true)
    expect(spent).toEqual([{ tokens: 1302, cost: 0.039, byModel: [{ model: 'fake/image-model', tokens: 1302, cost: 0.039 }] }])
    // The same call run again after a crash: the image it kept, and no second request.
    expect(await run({ prompt: 'an orange square' }, context('call-1'))).toMatchObject({ images: result.images })
    expect(fake.imageRequests.length).toBe(before + 1)
  })

  it('edits an image of the conversation (by id, link or "latest") and never another conversation\'s', async () => {
    fake.imageReply('png')
    const { threads, run, context } = await setUp()
    const first = await run({ prompt: 'a square' }, context('call-a'))
    const before = fake.imageRequests.length
    await run({ prompt: 'make it blue', edit: `/api/threads/x/attachments/${first.images[0]!.id}` }, context('call-b'))
    expect(fake.imageRequests.at(-1)).toMatchObject({ prompt: 'make it blue', sourceImages: 1 })
    // Another conversation's picture is not found, and nothing is asked.
    const elsewhere = await threads.createThread({ userId: 'ben' })
    await threads.addAttachment({ attachment: { id: 'theirs', name: 'x.png', mediaType: 'image/png', kind: 'image', size: 10 }, bytes: fakePng(), threadId: elsewhere.id, userId: 'ben' })
    await expect(run({ prompt: 'change it', edit: 'theirs' }, context('call-c'))).rejects.toThrow(/no image "theirs"/)
    await expect(run({ prompt: 'change it', edit: 'latest' }, context('call-d'))).rejects.toThrow(/no image yet/)
    expect(fake.imageRequests.length).toBe(before + 1)
  })

  it('refuses before asking: no conversation of the caller, past the hourly rate, no budget left, over the storage quota', async () => {
    fake.imageReply('png')
    const { run, context } = await setUp()
    await expect(run({ prompt: 'x' }, context('c0', 'mallory'))).rejects.toThrow(/kept with a conversation/)
    for (const call of ['c1', 'c2', 'c3']) await run({ prompt: 'a dot' }, context(call))
    await expect(run({ prompt: 'a dot' }, context('c4'))).rejects.toThrow(/At most 3 images an hour/)
    const poor = await setUp({ left: { tokens: 0, cost: 5 } })
    const before = fake.imageRequests.length
    await expect(poor.run({ prompt: 'x' }, poor.context('p1'))).rejects.toThrow(/budget is used up/)
    expect(fake.imageRequests.length).toBe(before)
    const full = await setUp({ quota: 10 })
    await expect(full.run({ prompt: 'x' }, full.context('q1'))).rejects.toThrow(/MiB, the most kept per user/)
  })

  it('takes only inline images it can read, within their size: a link, an oversized image and an error each fail saying so', async () => {
    const { run, context, threads } = await setUp()
    fake.imageReply('link')
    await expect(run({ prompt: 'x' }, context('l1'))).rejects.toThrow(/link instead of an image/)
    fake.imageReply('huge')
    await expect(run({ prompt: 'x' }, context('h1'))).rejects.toThrow(/larger than/)
    fake.imageReply('error')
    await expect(run({ prompt: 'x' }, context('e1'))).rejects.toThrow(/insufficient credits/)
    fake.imageReply('png')
    expect(await threads.attachmentBytes('ana')).toBe(0)
  })

  it('draws offline with the demo: an SVG scene from the words, edited from the scene it keeps', async () => {
    const { run, context, threads } = await setUp({ maker: 'demo' })
    const before = fake.imageRequests.length
    const first = await run({ prompt: 'Draw a house by the sea at sunset' }, context('d1'))
    expect(first.images[0]).toMatchObject({ mediaType: 'image/svg+xml' })
    expect(first.modelText).toBe('A drawing of the sun, the sea and a house, at sunset.')
    const changed = await run({ prompt: 'add a boat and make it night', edit: first.images[0]!.id }, context('d3'))
    expect(changed.modelText).toBe('A drawing of the sea, a house and a boat, at night.')
    const svg = new TextDecoder().decode((await threads.readAttachment(changed.images[0]!.id))!.bytes)
    expect(svg).not.toMatch(/<script|on\w+=|href=/i)
    expect(fake.imageRequests.length).toBe(before)
  })
})

describe('the demo model', () => {
  const offered = { tools: [{ type: 'function' as const, function: { name: 'generate_image', description: '', parameters: { type: 'object' as const } } }] }
  it('draws when asked for a picture, edits the newest after one, and says what it drew', () => {
    expect(planDemoReply({ ...offered, messages: [{ role: 'user', content: 'Draw a sunset over the sea' }] })).toEqual({ kind: 'tool-calls', calls: [{ name: 'generate_image', arguments: { prompt: 'Draw a sunset over the sea' } }] })
    expect(planDemoReply({ ...offered, messages: [{ role: 'user', content: 'make an image of a cabin in the woods' }] })).toMatchObject({ kind: 'tool-calls', calls: [{ name: 'generate_image' }] })
    expect(planDemoReply({ ...offered, messages: [{ role: 'user', content: 'make a plan for Monday' }] })).toMatchObject({ kind: 'text' })
    const afterPicture = [{ role: 'user' as const, content: 'draw a lake' }, { role: 'assistant' as const, content: 'Here is your picture: a drawing of the sea.' }, { role: 'user' as const, content: 'add a boat' }]
    expect(planDemoReply({ ...offered, messages: afterPicture })).toEqual({ kind: 'tool-calls', calls: [{ name: 'generate_image', arguments: { prompt: 'add a boat', edit: 'latest' } }] })
    expect(planDemoReply({ tools: [], messages: [{ role: 'user', content: 'Draw a sunset over the sea' }] })).toMatchObject({ kind: 'text' })
    const answered = planDemoReply({ messages: [
      { role: 'user', content: 'draw a lake' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'generate_image', arguments: '{"prompt":"draw a lake"}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: JSON.stringify({ images: [{ id: 'i' }], prompt: 'draw a lake', modelText: 'A drawing of the sea, by day.' }) },
    ] })
    expect(answered).toMatchObject({ kind: 'text', text: expect.stringContaining('Here is your picture: a drawing of the sea, by day.') })
  })
})

describe('the demo drawing', () => {
  it('reads the scene from the words, keeps it for edits, and escapes the prompt', () => {
    const scene = sceneFor('a purple forest with mountains')
    expect(scene).toEqual({ time: 'day', elements: ['sun', 'mountains', 'trees'], tint: '#8a4fd6' })
    const svg = drawScene(scene, 'a </title><script>alert(1)</script>')
    expect(svg).not.toContain('<script>')
    expect(sceneOf(svg)).toEqual(scene)
    expect(sceneFor('remove the sun and add clouds', scene)).toEqual({ time: 'day', elements: ['clouds', 'mountains', 'trees'], tint: '#8a4fd6' })
    expect(sceneOf('<svg><desc>or3-demo-scene:{"time":"noon"}</desc></svg>')).toBeUndefined()
  })
})

describe('an answer\'s images', () => {
  it('are the files its completed generate_image calls name, and nothing of a failed or foreign result', () => {
    const made = JSON.stringify({ images: [{ id: 'img_1', name: 'a.png', mediaType: 'image/png', kind: 'image', size: 10 }], prompt: 'a' })
    const job = { toolRounds: [{ round: 1, toolCalls: [
      { id: 'c1', name: 'generate_image', arguments: '{}', result: made, executionTimeMs: 1 },
      { id: 'c2', name: 'generate_image', arguments: '{}', result: made.replace('img_1', 'img_2'), error: 'failed', executionTimeMs: 1 },
      { id: 'c3', name: 'other_tool', arguments: '{}', result: made.replace('img_1', 'img_3'), executionTimeMs: 1 },
    ] }] } as unknown as BackgroundJob
    expect(imagesMadeBy(job)).toEqual([{ id: 'img_1', name: 'a.png', mediaType: 'image/png', kind: 'image', size: 10 }])
    expect(generatedImagesOf('{"images":[{"id":"../x","name":"a","mediaType":"image/png","size":1}]}').images).toEqual([])
    expect(generatedImagesOf('not json').images).toEqual([])
  })
})
