/**
 * Indexing in the background: each instance takes the documents waiting to be indexed, one at a
 * time, under a lease in the store (renewed while it reads), reads the file in a worker, cuts it
 * into passages and hands them to the store in one step that also marks the document ready.
 *
 * Exactly once: the passages of a version are written in the same step that ends its indexing, and
 * only by the lease's holder, for the version it claimed. A crash before that step leaves the
 * document waiting (its lease runs out, and this instance after its restart, or another one, reads
 * it again: nothing was written); a crash after it leaves it ready. A new version added meanwhile
 * makes the old indexing's write a no-op, and is indexed itself.
 *
 * With an embeddings endpoint, the passages are embedded before that step and their vectors
 * written in it too (the endpoint is only read from: asking it again after a crash changes
 * nothing). An endpoint that fails three times running leaves the document searched by its words
 * alone, and says so in the log; an instance shutting down meanwhile writes nothing and leaves the
 * document to its lease, to be embedded at the next start.
 */
import type { KnowledgeDocument } from '../../../shared/types/knowledge'
import type { KnowledgeStore } from '../stores/knowledge/knowledge-store'
import { passagesOf } from './passages'
import { readDocument, UnreadableDocumentError } from './read-document'
import { EmbeddingError, type Embedder } from './embeddings'

export interface IndexerSettings {
  parseTimeoutMs: number
  parseMemoryMb: number
  passagesPerDocument: number
  /** How long a claim lasts without renewal (a crashed indexer's documents are taken again after it). */
  leaseMs: number
  /** Embeds passages (no embeddings endpoint set: none, BM25 alone). */
  embedder?: Embedder
  /** Waits before the second and third embedding try (tests shorten them). */
  embeddingRetryMs?: readonly number[]
  /** Why a document cut into `count` passages may not be kept (its owner's passages limit), or undefined. */
  passagesRefusal?: (document: KnowledgeDocument, count: number) => Promise<string | undefined>
}

/** Waits before the second and third try of an embedding request. */
const EMBEDDING_RETRY_MS = [1_000, 4_000]

/** What embedding gives when the indexer was closed meanwhile: nothing is to be written. */
const STOPPED = Symbol('stopped')

/** Waits `ms`; false, at once, when `signal` aborts first. */
function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(false)
    const stop = () => {
      clearTimeout(timer)
      resolve(false)
    }
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', stop)
      resolve(true)
    }, ms)
    signal.addEventListener('abort', stop, { once: true })
  })
}

interface Logger { warn: (message: string, ...rest: unknown[]) => void, info: (message: string, ...rest: unknown[]) => void }

/** Characters per passage, at most, for the text limit a read is given. */
const CHARS_PER_PASSAGE = 1_000
/** Documents read from the store per look. */
const BATCH = 20

export class KnowledgeIndexer {
  private readonly holder = `indexer-${crypto.randomUUID()}`
  private running: Promise<void> | undefined
  private again = false
  private closed = false
  /** Aborted on close: an embedding request or a wait between its tries ends at once. */
  private readonly stopping = new AbortController()
  private retryTimer: ReturnType<typeof setTimeout> | undefined
  private readonly idle = new Set<() => void>()

  constructor(
    private readonly store: KnowledgeStore,
    private readonly readFile: (document: KnowledgeDocument) => Promise<Uint8Array | null>,
    private readonly settings: IndexerSettings,
    private readonly logger?: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /** Looks for documents to index now (a document was added; the server started). */
  nudge(): void {
    if (this.closed) return
    if (this.running) {
      this.again = true
      return
    }
    this.running = this.drain().catch((error) => {
      this.logger?.warn('Indexing documents failed; trying again shortly', error)
      this.lookAgainIn(5_000)
    }).finally(() => {
      this.running = undefined
      if (this.again && !this.closed) {
        this.again = false
        this.nudge()
      } else for (const resolve of this.idle) resolve()
    })
  }

  /** Resolves when nothing is being indexed (tests). */
  whenIdle(): Promise<void> {
    return this.running ? new Promise(resolve => this.idle.add(resolve)) : Promise.resolve()
  }

  /** Stops looking; a document being read is left to its lease (taken again at the next start). */
  close(): void {
    this.closed = true
    this.stopping.abort()
    clearTimeout(this.retryTimer)
  }

  private async drain(): Promise<void> {
    for (;;) {
      if (this.closed) return
      const waiting = await this.store.listUnindexed(BATCH)
      let indexed = 0
      let leased = 0
      for (const document of waiting) {
        if (this.closed) return
        if (await this.indexOne(document)) indexed++
        else leased++
      }
      if (waiting.length < BATCH || indexed === 0) {
        // Held by another indexer (or one that died): look again once its lease may have run out.
        if (leased > 0) this.lookAgainIn(Math.min(this.settings.leaseMs, 60_000))
        return
      }
    }
  }

  private lookAgainIn(ms: number): void {
    clearTimeout(this.retryTimer)
    this.retryTimer = setTimeout(() => this.nudge(), ms + 50)
    this.retryTimer.unref?.()
  }

  /** Indexes one document's version if it can claim it; false when another indexer holds it. */
  private async indexOne(document: KnowledgeDocument): Promise<boolean> {
    const { id, contentHash } = document
    if (!await this.store.claimIndexing(id, contentHash, this.holder, this.now() + this.settings.leaseMs, this.now())) return false
    const renew = setInterval(() => {
      void this.store.claimIndexing(id, contentHash, this.holder, this.now() + this.settings.leaseMs, this.now()).catch(() => {})
    }, Math.max(500, Math.floor(this.settings.leaseMs / 3)))
    try {
      const result = await this.read(document)
      // Closed while embedding: nothing is written, the lease hands it to the next start.
      if (!result) return true
      const kept = await this.store.finishIndexing(id, contentHash, this.holder, result, this.now())
      if (kept && result.status === 'failed') this.logger?.info(`Document ${id} could not be indexed: ${result.error}`)
    } finally {
      clearInterval(renew)
    }
    return true
  }

  private async read(document: KnowledgeDocument) {
    const bytes = await this.readFile(document)
    if (!bytes) return { status: 'failed' as const, error: 'Its file is missing; add it again.' }
    const { passagesPerDocument, parseTimeoutMs, parseMemoryMb } = this.settings
    try {
      const read = await readDocument(bytes, document.mediaType, { timeoutMs: parseTimeoutMs, memoryMb: parseMemoryMb, maxChars: passagesPerDocument * CHARS_PER_PASSAGE })
      const passages = passagesOf(read)
      if (passages.length === 0) return { status: 'failed' as const, error: 'No text was found in it (a scanned PDF has images, not text).' }
      if (passages.length > passagesPerDocument) return { status: 'failed' as const, error: `It has more than ${passagesPerDocument.toLocaleString('en')} passages, more than one document may hold. Split it into parts.` }
      const refusal = await this.settings.passagesRefusal?.(document, passages.length)
      if (refusal) return { status: 'failed' as const, error: refusal }
      const vectors = await this.embed(document, passages.map(passage => passage.heading ? `${passage.heading}\n${passage.text}` : passage.text))
      if (vectors === STOPPED) return undefined
      return { status: 'ready' as const, passages, ...(read.kind === 'pages' ? { pages: read.pages.length } : {}), ...(vectors ? { vectors } : {}) }
    } catch (error) {
      if (error instanceof UnreadableDocumentError) return { status: 'failed' as const, error: error.message }
      throw error
    }
  }

  /** The passages' vectors; undefined without an endpoint or when it failed three times; STOPPED when closed meanwhile. */
  private async embed(document: KnowledgeDocument, texts: string[]) {
    const { embedder } = this.settings
    if (!embedder) return undefined
    for (let attempt = 0; ; attempt++) {
      try {
        return { model: embedder.model, values: await embedder.embed(texts, this.stopping.signal) }
      } catch (error) {
        if (this.closed) return STOPPED
        if (!(error instanceof EmbeddingError)) throw error
        const wait = (this.settings.embeddingRetryMs ?? EMBEDDING_RETRY_MS)[attempt]
        if (wait === undefined) {
          this.logger?.warn(`Document ${document.id} is searched by its words only: ${error.message}`)
          return undefined
        }
        if (!await pause(wait, this.stopping.signal)) return STOPPED
      }
    }
  }
}
