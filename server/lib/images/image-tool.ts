/**
 * `generate_image`: the model makes a picture, or changes one, with the operator's image-output
 * model (`images.model`, OpenRouter's image modalities), and the picture is kept as a file of the
 * conversation: shown under the call in the answer, kept as the answer's files (in "Export my
 * data", and in share links that include files). With no key (or in a conversation with the
 * offline demo model) the demo draws an SVG scene instead, so it works offline.
 *
 * Bounded before anything is asked: the person's rate per hour, what is left of their daily
 * budget, their storage quota; the image's size and type when it comes back.
 *
 * Exactly once: each image's file id comes from the job, the call and its place, so a call run
 * again after a crash finds the images it stored and asks for none (a crash between the model's
 * answer and the store asks once more: the first answer was never kept, and is paid twice).
 */
import { createHash } from 'node:crypto'
import { z } from 'zod'
import type { RateLimiterAbstract } from 'rate-limiter-flexible'
import { defineServerTool, type ServerToolModule } from '../tools/define-tool'
import type { ToolExecutionContext } from '../tools/tool-types'
import type { ThreadStore } from '../stores/threads/thread-store'
import { checkAttachmentQuota, type StorageQuotas } from '../stores/quotas'
import { takePoint, type LimiterFactory } from '../stores/rate-limits/limiters'
import type { ChatClientOptions, ChatEndpoint } from '../openrouter/chat-client'
import { requestImages, type ImageBytes } from './image-requests'
import { describeScene, drawScene, sceneFor, sceneOf } from './demo-drawing'
import { GENERATE_IMAGE_TOOL, type GenerateImageResult } from '../../../shared/images'
import type { MessageAttachment } from '../../../shared/types/attachment'

/** The image settings (`images.*`). */
export interface ImageSettings {
  model: string
  maxImageBytes: number
  imagesPerAnswer: number
  perHour: number
  timeoutMs: number
}

/** Where a call's images are made: an endpoint and its model, or the offline demo's drawing. */
export type ImageMaker = { endpoint: ChatEndpoint, model: string } | 'demo'

export interface ImageToolServices {
  threads: ThreadStore
  quotas: StorageQuotas
  limiterFor: LimiterFactory
  client: Pick<ChatClientOptions, 'retry' | 'appUrl' | 'appTitle'>
  /** Who makes the images of the job `jobId` (its person's key, else the server's; the demo without either). */
  makerFor: (jobId: string, userId: string) => Promise<ImageMaker>
  /** The person's daily budget: what is left (tokens, credits), and counting what an image cost. */
  budget: { left: (userId: string) => Promise<{ tokens: number, cost: number }>, record: (userId: string, spent: { tokens: number, cost: number, byModel: Array<{ model: string, tokens: number, cost: number }> }) => Promise<void> }
}

const SVG = 'image/svg+xml'

/** A file id that names one image of one call, the same on every run of the call. */
function imageFileId(context: ToolExecutionContext, index: number): string {
  return `img_${createHash('sha256').update(`${context.jobId}\n${context.toolCallId ?? ''}\n${index}`).digest('hex').slice(0, 24)}`
}

/** A file name from the prompt's first words: "sunset-over-mountains.png". */
function fileNameFor(prompt: string, mediaType: string, index: number): string {
  const words = prompt.toLowerCase().normalize('NFKD').replace(/[^a-z0-9\s-]/g, ' ').trim().split(/\s+/).filter(Boolean).slice(0, 6).join('-') || 'image'
  const extension = ({ 'image/png': 'png', 'image/jpeg': 'jpg', 'image/gif': 'gif', 'image/webp': 'webp', [SVG]: 'svg' } as Record<string, string>)[mediaType] ?? 'img'
  return `${words.slice(0, 60)}${index > 0 ? `-${index + 1}` : ''}.${extension}`
}

/** The attachment id a person or model names an image by: its id, or a link to it. */
function attachmentIdIn(reference: string): string {
  const fromLink = /\/attachments\/([\w-]{1,100})(?:[?#]|$)/.exec(reference)?.[1]
  return fromLink ?? reference.trim()
}

/** The tool (see the module comment). */
export class ImageTool {
  private readonly limiter: RateLimiterAbstract

  constructor(private readonly settings: ImageSettings, private readonly services: ImageToolServices) {
    this.limiter = services.limiterFor({ keyPrefix: 'images-user', points: settings.perHour, duration: 3_600 })
  }

  module(): ServerToolModule {
    return defineServerTool({
      name: GENERATE_IMAGE_TOOL,
      description: 'Make a picture from a description, or change one in this conversation (the person\'s attached image or one made before). The image is kept with the conversation and shown to the person under the call. Describe the whole picture in the prompt: subject, setting, style, colours.',
      parameters: z.object({
        prompt: z.string().trim().min(1).max(4_000).describe('What the picture shows (or, for an edit, what to change), e.g. "a watercolour of a lighthouse at dusk".'),
        edit: z.string().trim().min(1).max(300).optional().describe('The image to change: its id or link (from an earlier generate_image result or the conversation), or "latest" for the newest image in the conversation. Omit to make a new picture.'),
      }),
      capabilities: ['image_generation'],
      idempotent: true,
      timeoutMs: this.settings.timeoutMs,
      handler: async ({ prompt, edit }, context) => this.generate(prompt, edit, context),
    })
  }

  private async generate(prompt: string, edit: string | undefined, context: ToolExecutionContext): Promise<GenerateImageResult> {
    const { threads } = this.services
    const thread = context.threadId ? await threads.getThread(context.threadId) : null
    if (!thread || thread.userId !== context.userId) throw new Error('Images are kept with a conversation, and this run has none; ask for the picture in a chat.')
    const kept = await this.keptImages(context)
    if (kept.length > 0) return this.result(kept, prompt, edit)

    const source = edit ? await this.sourceImage(edit, context) : undefined
    const wait = await takePoint(this.limiter, context.userId)
    if (wait !== undefined) throw new Error(`At most ${this.settings.perHour} images an hour per person; the next can be made in ${Math.ceil(wait / 60)} min. Tell the person.`)
    const maker = await this.services.makerFor(context.jobId, context.userId)
    let made: { images: ImageBytes[], text: string }
    if (maker === 'demo') {
      const scene = sceneFor(prompt, source?.mediaType === SVG ? sceneOf(new TextDecoder().decode(source.bytes)) : undefined)
      made = { images: [{ mediaType: SVG, bytes: new TextEncoder().encode(drawScene(scene, prompt)) }], text: `A drawing of ${describeScene(scene)}.` }
    } else {
      if (source?.mediaType === SVG) throw new Error('That image is a drawing of the offline demo (SVG), which image models cannot read; make a new picture instead.')
      const left = await this.services.budget.left(context.userId)
      if (left.tokens <= 0 || left.cost <= 0) throw new Error('The person\'s daily budget is used up, so no image can be made today. Tell them.')
      const answer = await requestImages(maker.endpoint, { model: maker.model, prompt, sources: source ? [source] : [], maxImageBytes: this.settings.maxImageBytes, maxImages: this.settings.imagesPerAnswer, signal: context.signal }, this.services.client)
      if (answer.usage) await this.services.budget.record(context.userId, { tokens: answer.usage.totalTokens, cost: answer.usage.cost, byModel: [{ model: maker.model, tokens: answer.usage.totalTokens, cost: answer.usage.cost }] })
      made = answer
    }
    checkAttachmentQuota(await threads.attachmentBytes(context.userId), made.images.reduce((total, image) => total + image.bytes.byteLength, 0), this.services.quotas)
    const stored: MessageAttachment[] = []
    for (const [index, image] of made.images.entries()) {
      const attachment: MessageAttachment = { id: imageFileId(context, index), name: fileNameFor(prompt, image.mediaType, index), mediaType: image.mediaType, kind: 'image', size: image.bytes.byteLength }
      await threads.addAttachment({ attachment, bytes: image.bytes, threadId: thread.id, userId: context.userId })
      stored.push(attachment)
    }
    return this.result(stored, prompt, edit, made.text)
  }

  private result(images: MessageAttachment[], prompt: string, edit: string | undefined, modelText?: string): GenerateImageResult {
    const note = `The person sees ${images.length > 1 ? 'these images' : 'the image'} under this call already: say in a sentence what ${images.length > 1 ? 'they show' : 'it shows'}, without its link. To change it later, call ${GENERATE_IMAGE_TOOL} with edit "${images[0]!.id}" (or "latest").`
    return { images, prompt, ...(modelText ? { modelText } : {}), ...(edit ? { edited: edit } : {}), note }
  }

  /** The images an earlier run of this call stored (a call run again after a crash). */
  private async keptImages(context: ToolExecutionContext): Promise<MessageAttachment[]> {
    const images: MessageAttachment[] = []
    for (let index = 0; index < this.settings.imagesPerAnswer; index++) {
      const stored = await this.services.threads.readAttachment(imageFileId(context, index))
      if (!stored || stored.threadId !== context.threadId) break
      images.push(stored.attachment)
    }
    return images
  }

  /** The image an edit starts from: one of this conversation's images, by id, link or "latest". */
  private async sourceImage(reference: string, context: ToolExecutionContext): Promise<ImageBytes> {
    const { threads } = this.services
    let id = attachmentIdIn(reference)
    if (id.toLowerCase() === 'latest') {
      const messages = await threads.listMessages(context.threadId)
      const newest = messages.flatMap(message => message.attachments ?? []).filter(file => file.kind === 'image').at(-1)
      if (!newest) throw new Error('This conversation has no image yet to edit; make one first, or ask the person to attach one.')
      id = newest.id
    }
    const stored = await threads.readAttachment(id)
    if (!stored || stored.threadId !== context.threadId || stored.attachment.kind !== 'image') throw new Error(`This conversation has no image "${reference.slice(0, 100)}"; use the id or link of one of its images, or "latest".`)
    if (stored.bytes.byteLength > this.settings.maxImageBytes) throw new Error('That image is too large to edit here.')
    return { mediaType: stored.attachment.mediaType, bytes: stored.bytes }
  }
}
