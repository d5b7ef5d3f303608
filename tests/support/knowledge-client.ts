/**
 * What the knowledge e2e files do through the API as a person would: upload a document, wait for a
 * base's indexing to end, ask the offline demo (or another model) with bases attached, and read the
 * passage an answer's citation opens.
 */
import { expect, vi } from 'vitest'
import type { KnowledgeDocument, KnowledgeDocumentView } from '../../shared/types/knowledge'
import { SessionClient, waitForJobEnd } from './job-stream-client'

const DEMO = 'or3/offline-demo'

export const encode = (text: string) => new TextEncoder().encode(text)
export const upload = (client: SessionClient, baseId: string, name: string, bytes: Uint8Array) => client.post(`/api/knowledge/${baseId}/documents`, { name, data: Buffer.from(bytes).toString('base64') })

/** Waits until every document of the base is indexed (ready or failed), and returns them. */
export async function indexed(client: SessionClient, baseId: string, count: number): Promise<KnowledgeDocument[]> {
  let documents: KnowledgeDocument[] = []
  await vi.waitFor(async () => {
    documents = (await client.json<{ documents: KnowledgeDocument[] }>(`/api/knowledge/${baseId}`)).documents
    expect(documents).toHaveLength(count)
    expect(documents.filter(document => document.status === 'queued' || document.status === 'indexing')).toEqual([])
  }, { timeout: 60_000, interval: 100 })
  return documents
}

/** Asks `content` in a new conversation with `bases` attached, and waits for the answer. */
export async function ask(client: SessionClient, content: string, bases: string[], model = DEMO) {
  const thread = await (await client.post('/api/threads', {})).json()
  if (bases.length) {
    const patched = await client.fetch(`/api/threads/${thread.id}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ settings: { knowledgeBaseIds: bases } }) })
    if (patched.status !== 200) throw new Error(`attaching answered ${patched.status}: ${await patched.text()}`)
  }
  const sent = await client.post(`/api/threads/${thread.id}/messages`, { content, model })
  if (sent.status !== 202) throw new Error(`sending answered ${sent.status}: ${await sent.text()}`)
  return waitForJobEnd(client, (await sent.json()).jobId, 60_000)
}

/** The knowledge links an answer cites. */
export const citedLinks = (content: string) => [...content.matchAll(/\]\((\/knowledge\/[^)\s]+)\)/g)].map(match => match[1]!)

/** The passage a cited link points at, read through the API as the document page reads it. */
export async function passageAt(client: SessionClient, link: string) {
  const url = new URL(link, 'http://x')
  const [, , baseId, documentId] = url.pathname.split('/')
  const seq = Number(url.searchParams.get('passage'))
  const view = await client.json<KnowledgeDocumentView>(`/api/knowledge/${baseId}/documents/${documentId}?from=${seq}`)
  return { document: view.document, passage: view.passages[0]! }
}
