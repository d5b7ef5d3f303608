/**
 * A conversation's artifacts (shared/artifacts.ts) as the side panel shows them: each thing an
 * answer built, with its versions (the same kind and title in later answers), oldest first.
 */
import { artifactKey, artifactsIn, type Artifact } from '#shared/artifacts'

/** One version of an artifact: which answer wrote it, and where among that answer's artifacts. */
export interface ArtifactVersion extends Artifact {
  messageId: string
}

/** Every artifact of the finished answers of `messages`, keyed alike for versions (see `artifactKey`). */
export function conversationArtifacts(messages: ReadonlyArray<{ id: string, role: string, content: string, status?: string }>): Map<string, ArtifactVersion[]> {
  const byKey = new Map<string, ArtifactVersion[]>()
  for (const message of messages) {
    if (message.role !== 'assistant' || message.status === 'streaming') continue
    for (const artifact of artifactsIn(message.content)) {
      const key = artifactKey(artifact)
      byKey.set(key, [...byKey.get(key) ?? [], { ...artifact, messageId: message.id }])
    }
  }
  return byKey
}

/** A file name for downloading `artifact`. */
export function artifactFileName(artifact: Pick<Artifact, 'kind' | 'title'>): string {
  const base = artifact.title.replace(/[^\p{L}\p{N} ._-]+/gu, '').trim().slice(0, 60) || 'artifact'
  return `${base}.${{ html: 'html', svg: 'svg', mermaid: 'mmd', markdown: 'md' }[artifact.kind]}`
}

/** An SVG as an image address: shown as an image, its scripts never run and it loads nothing. */
export function svgImageUrl(svg: string): string {
  return `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`
}
