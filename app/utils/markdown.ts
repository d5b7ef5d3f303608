/**
 * Markdown for model answers, rendered safely: raw HTML in a message is shown as text (never
 * parsed), and links with unsafe schemes (`javascript:`, `vbscript:`, `file:`, non-image `data:`)
 * are not turned into links. Links open in a new tab without access to this page.
 */
import MarkdownIt from 'markdown-it'

const markdown = new MarkdownIt({ html: false, linkify: true, breaks: true, typographer: false })

const defaultLinkOpen = markdown.renderer.rules.link_open
  ?? ((tokens, index, options, _env, self) => self.renderToken(tokens, index, options))
markdown.renderer.rules.link_open = (tokens, index, options, env, self) => {
  tokens[index]!.attrSet('target', '_blank')
  tokens[index]!.attrSet('rel', 'noopener noreferrer nofollow')
  return defaultLinkOpen(tokens, index, options, env, self)
}

/** HTML for a message's markdown (safe to bind with v-html). */
export function renderMarkdown(text: string): string {
  return markdown.render(text)
}
