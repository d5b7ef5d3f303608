/**
 * The knowledge-base settings (`knowledge.*` of server-config.ts): whether people may keep
 * knowledge bases, and the bounds of what they put in them and of reading a file.
 */
import { z } from 'zod'
import { group, setting } from './setting-types'

/** Every knowledge setting, with its default and what it means. */
export function knowledgeSettings() {
  return group({
    enabled: setting(z.boolean(), true,
      'Offer knowledge bases (Knowledge in the menu): people add documents (PDF, DOCX, Markdown, HTML, text, CSV), attach bases to a conversation, and the model searches them with `search_knowledge` (policy name `capability:knowledge`, guests denied unless a rule allows it) and cites the passages. Search is SQLite full-text (BM25), which works offline, and by meaning too with an embeddings model (`NUXT_KNOWLEDGE_EMBEDDINGS_MODEL`).'),
    fileBytes: setting(z.number().int().min(10_000).max(200_000_000), 20 * 1024 * 1024,
      'Largest document file; a larger one is refused saying so.'),
    basesPerPerson: setting(z.number().int().min(1).max(1_000), 50,
      'Knowledge bases one person may own.'),
    passagesPerDocument: setting(z.number().int().min(10).max(200_000), 20_000,
      'Passages (about a thousand characters each) one document may be cut into; a longer document is refused when it is read, saying so.'),
    parseTimeoutMs: setting(z.number().int().min(1_000).max(600_000), 60_000,
      'Longest reading one file may take (in a worker thread of its own); past it the document is marked failed, saying so.'),
    parseMemoryMb: setting(z.number().int().min(64).max(8_192), 256,
      'Memory reading one file may use (MiB; a PDF or a zip bomb past it is stopped, and the document marked failed).'),
    indexLeaseMs: setting(z.number().int().min(1_000).max(600_000), 30_000,
      'How long an instance\'s claim on a document it indexes lasts without being renewed (it renews it while reading): after a crash, the document is indexed again once this has passed.'),
    embeddingsModel: setting(z.string().max(200), '',
      'Embedding model for searching by meaning as well as by words (hybrid: the two rankings fused by reciprocal rank), e.g. `openai/text-embedding-3-small` on OpenRouter or `nomic-embed-text` on Ollama. Empty: words only (BM25), which works offline. Documents indexed before it was set are searched by words until added again.'),
    embeddingsBaseUrl: setting(z.union([z.literal(''), z.url({ protocol: /^https?$/, error: 'must be empty or an http(s) URL such as http://localhost:11434/v1' })]), '',
      'OpenAI-compatible endpoint whose `/embeddings` is asked; empty: `NUXT_OPENROUTER_BASE_URL`.'),
    embeddingsApiKey: setting(z.string(), '',
      'Key for the embeddings endpoint; empty: `NUXT_OPENROUTER_API_KEY`. Never logged or stored in plain text.'),
    embeddingsBatch: setting(z.number().int().min(1).max(512), 64,
      'Passages embedded per request while indexing.'),
    embeddingsTimeoutMs: setting(z.number().int().min(1_000).max(600_000), 30_000,
      'Longest wait for one embeddings request (a question\'s search then uses words alone; indexing tries three times, then keeps the document searchable by words).'),
    rerankModel: setting(z.string().max(200), '',
      'Rerank model that puts the best passages of a search in order of relevance to the question (a `/rerank` endpoint as Cohere, Jina, TEI, vLLM and Infinity serve it), e.g. `rerank-v3.5` or `BAAI/bge-reranker-v2-m3`. Empty: the fused order (BM25, and meaning with embeddings). A failing endpoint leaves the fused order.'),
    rerankBaseUrl: setting(z.union([z.literal(''), z.url({ protocol: /^https?$/, error: 'must be empty or an http(s) URL such as http://localhost:8080/v1' })]), '',
      'OpenAI-style endpoint whose `/rerank` is asked; empty: the embeddings endpoint, else `NUXT_OPENROUTER_BASE_URL`.'),
    rerankApiKey: setting(z.string(), '',
      'Key for the rerank endpoint; empty: the embeddings key, else `NUXT_OPENROUTER_API_KEY`. Never logged or stored in plain text.'),
    rerankCandidates: setting(z.number().int().min(2).max(100), 20,
      'Passages a search hands the rerank model (the best of the fused list); the best of its order are returned.'),
    rerankTimeoutMs: setting(z.number().int().min(500).max(120_000), 10_000,
      'Longest wait for one rerank (past it the search keeps the fused order).'),
    passagesUpFront: setting(z.number().int().min(0).max(10), 0,
      'Passages searched with a conversation\'s question and put into its instructions before the model answers, besides `search_knowledge`; `0`: none (the model searches when it needs to).'),
  })
}
