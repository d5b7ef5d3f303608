import type { KnowledgeBaseView, KnowledgeDocument, KnowledgeDocumentView, KnowledgeList, KnowledgeShare } from '../../shared/types/knowledge'

/** What a base is called, said to be, and who it is shared with. */
export interface KnowledgeBaseForm {
  name: string
  description?: string
  sharedWith?: KnowledgeShare[]
}

/** A file's bytes in base64, read a piece at a time (a large file never builds one huge string of characters first). */
async function base64Of(file: Blob): Promise<string> {
  const bytes = new Uint8Array(await file.arrayBuffer())
  const pieces: string[] = []
  for (let offset = 0; offset < bytes.length; offset += 0x8000) pieces.push(String.fromCharCode(...bytes.subarray(offset, offset + 0x8000)))
  return btoa(pieces.join(''))
}

const base = (id: string) => `/api/knowledge/${encodeURIComponent(id)}`

/** Knowledge bases: a person's own and those shared with their groups, their documents, and reading one where a citation points. */
export function useKnowledge() {
  return {
    list: () => $fetch<KnowledgeList>('/api/knowledge'),
    create: (form: KnowledgeBaseForm) => $fetch<KnowledgeBaseView>('/api/knowledge', { method: 'POST', body: form }),
    update: (id: string, form: KnowledgeBaseForm) => $fetch<KnowledgeBaseView>(base(id), { method: 'PATCH', body: form }),
    remove: (id: string) => $fetch(base(id), { method: 'DELETE' }),
    documents: (id: string) => $fetch<{ base: KnowledgeBaseView, documents: KnowledgeDocument[] }>(base(id)),
    /** Adds a file (a new version of the document of the same name). */
    async upload(id: string, file: File): Promise<KnowledgeDocument> {
      return $fetch<KnowledgeDocument>(`${base(id)}/documents`, { method: 'POST', body: { name: file.name, ...(file.type ? { type: file.type } : {}), data: await base64Of(file) } })
    },
    /** Adds a web page (or a document on the web) by its address. */
    addPage: (id: string, url: string) => $fetch<KnowledgeDocument>(`${base(id)}/pages`, { method: 'POST', body: { url } }),
    removeDocument: (id: string, documentId: string) => $fetch(`${base(id)}/documents/${encodeURIComponent(documentId)}`, { method: 'DELETE' }),
    read: (id: string, documentId: string, from = 0) => $fetch<KnowledgeDocumentView>(`${base(id)}/documents/${encodeURIComponent(documentId)}`, { query: { from } }),
    fileUrl: (id: string, documentId: string) => `${base(id)}/documents/${encodeURIComponent(documentId)}/file`,
  }
}
