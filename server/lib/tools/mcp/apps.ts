/**
 * MCP Apps (the `io.modelcontextprotocol/ui` extension): a tool whose `_meta.ui.resourceUri` names a
 * `ui://` resource is shown, under its call, as that resource's HTML page, and the page may call the
 * same server's tools back through the app's bridge. This module reads what the server declares
 * (a tool's link and who may call it, a page and the network it asks for) and bounds it; the page is
 * served in the same sandbox as an answer's artifacts (no same-origin, a strict CSP that opens only
 * the domains the page declares), and every call it asks for is checked by the person's tool policy
 * and approvals (`McpApps`, runtime).
 */
import type { ReadResourceResult, Tool } from '@modelcontextprotocol/client'

/** The extension's id and the page type hosts read. */
export const MCP_APPS_EXTENSION = 'io.modelcontextprotocol/ui'
export const MCP_APP_MIME_TYPE = 'text/html;profile=mcp-app'

/** Who may call a tool: the model, the app's page, or both (the default). */
export type McpToolVisibility = 'model' | 'app'

/** What a tool of an MCP server declares for MCP Apps (every MCP tool has one: its server and name there). */
export interface McpAppLink {
  /** The server's name. */
  server: string
  /** The tool's name on its server. */
  tool: string
  /** The page shown under its calls, if it has one. */
  resourceUri?: string
  visibility: McpToolVisibility[]
}

/** Largest page served (its HTML). */
export const MAX_APP_PAGE_BYTES = 2 * 1024 * 1024

/** What a tool's `_meta` says for MCP Apps (a plain tool: no page, and the model and its server's apps may call it). */
export function appLinkOf(server: string, tool: Tool): McpAppLink {
  const meta = (tool._meta ?? {}) as Record<string, unknown>
  const ui = (meta.ui ?? {}) as { resourceUri?: unknown, visibility?: unknown }
  const uri = typeof ui.resourceUri === 'string' ? ui.resourceUri : typeof meta['ui/resourceUri'] === 'string' ? meta['ui/resourceUri'] as string : undefined
  const visibility = Array.isArray(ui.visibility) ? ui.visibility.filter((who): who is McpToolVisibility => who === 'model' || who === 'app') : undefined
  const resourceUri = uri && uri.startsWith('ui://') && uri.length <= 500 ? uri : undefined
  return { server, tool: tool.name, ...(resourceUri ? { resourceUri } : {}), visibility: visibility?.length ? [...new Set(visibility)] : ['model', 'app'] }
}

/** The network a page declares (`_meta.ui.csp`), each list of origins checked. */
export interface AppPageCsp {
  connectDomains: string[]
  resourceDomains: string[]
  frameDomains: string[]
}

/** A page to serve: its HTML and the network it may use. */
export interface AppPage {
  html: string
  csp: AppPageCsp
  prefersBorder?: boolean
}

/** An origin a page may declare: https (or a loopback http), a host with an optional `*.` and port, nothing else. */
const ORIGIN = /^(?:https:\/\/(?:\*\.)?[a-z0-9-]{1,63}(?:\.[a-z0-9-]{1,63}){0,10}(?::\d{1,5})?|http:\/\/(?:localhost|127\.0\.0\.1)(?::\d{1,5})?|wss:\/\/[a-z0-9-]{1,63}(?:\.[a-z0-9-]{1,63}){0,10}(?::\d{1,5})?)$/

function origins(value: unknown): string[] {
  if (!Array.isArray(value)) return []
  return [...new Set(value.filter((item): item is string => typeof item === 'string' && item.length <= 300).map(item => item.toLowerCase().replace(/\/+$/, '')).filter(item => ORIGIN.test(item)))].slice(0, 20)
}

/** Why a page cannot be shown, in words a person can act on. */
export class AppPageError extends Error {
  override name = 'AppPageError'
}

/** The page a `resources/read` answered, checked: one HTML content of the app type, within size. */
export function appPageOf(result: ReadResourceResult, uri: string): AppPage {
  const content = result.contents.find(item => item.uri === uri) ?? result.contents[0]
  if (!content) throw new AppPageError(`The MCP server has no page at ${uri}.`)
  const mimeType = (content.mimeType ?? '').replace(/\s+/g, '').toLowerCase()
  if (mimeType !== MCP_APP_MIME_TYPE && mimeType !== 'text/html') throw new AppPageError(`The MCP server's page at ${uri} is ${content.mimeType ?? 'of no type'}, not ${MCP_APP_MIME_TYPE}.`)
  const text = 'text' in content && typeof content.text === 'string'
    ? content.text
    : 'blob' in content && typeof content.blob === 'string' && content.blob.length <= Math.ceil(MAX_APP_PAGE_BYTES * 4 / 3) + 4 ? Buffer.from(content.blob, 'base64').toString('utf8') : undefined
  if (text === undefined || Buffer.byteLength(text) > MAX_APP_PAGE_BYTES) throw new AppPageError(`The MCP server's page at ${uri} is empty or larger than ${MAX_APP_PAGE_BYTES / 1024 / 1024} MiB.`)
  const ui = ((content._meta ?? {}) as { ui?: { csp?: Record<string, unknown>, prefersBorder?: unknown } }).ui ?? {}
  return {
    html: text,
    csp: { connectDomains: origins(ui.csp?.connectDomains), resourceDomains: origins(ui.csp?.resourceDomains), frameDomains: origins(ui.csp?.frameDomains) },
    ...(typeof ui.prefersBorder === 'boolean' ? { prefersBorder: ui.prefersBorder } : {}),
  }
}

/**
 * The headers a page is served with: the artifacts' sandbox (scripts and forms, never same-origin,
 * so it reads no cookie and calls no API as the person), framed by the app's own origins only, and a
 * CSP that opens exactly the domains it declared (none by default).
 */
export function appPageHeaders(csp: AppPageCsp, appOrigins: readonly string[]): Record<string, string> {
  const list = (domains: string[], otherwise: string) => (domains.length ? domains.join(' ') : otherwise)
  const resources = csp.resourceDomains.join(' ')
  const policy = [
    'sandbox allow-scripts allow-forms',
    'default-src \'none\'',
    `script-src 'unsafe-inline' ${resources}`.trim(),
    `style-src 'unsafe-inline' ${resources}`.trim(),
    `img-src data: blob: ${resources}`.trim(),
    `media-src data: blob: ${resources}`.trim(),
    `font-src data: ${resources}`.trim(),
    `connect-src ${list(csp.connectDomains, '\'none\'')}`,
    `frame-src ${list(csp.frameDomains, '\'none\'')}`,
    'object-src \'none\'',
    'base-uri \'none\'',
    'form-action \'none\'',
    `frame-ancestors ${[...new Set(appOrigins)].join(' ')}`,
  ].join('; ')
  return {
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Security-Policy': policy,
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'SAMEORIGIN',
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Cross-Origin-Embedder-Policy': 'credentialless',
    'Cross-Origin-Resource-Policy': 'same-origin',
    'Referrer-Policy': 'no-referrer',
    'Cache-Control': 'private, no-store',
  }
}
