/** How a found passage is named and linked wherever it is cited (search_knowledge's results, an answer's instructions). */
import type { KnowledgeHit } from '../../../shared/types/knowledge'

/** Where a passage is read in the app: its document, at the passage. */
export function passageLink(hit: Pick<KnowledgeHit, 'baseId' | 'documentId' | 'seq'>): string {
  return `/knowledge/${encodeURIComponent(hit.baseId)}/${encodeURIComponent(hit.documentId)}?passage=${hit.seq}`
}

/** "handbook.pdf, page 3 (Travel › Trains)". */
export function sourceOf(hit: Pick<KnowledgeHit, 'documentName' | 'page' | 'heading'>): string {
  return `${hit.documentName}${hit.page ? `, page ${hit.page}` : ''}${hit.heading ? ` (${hit.heading})` : ''}`
}
