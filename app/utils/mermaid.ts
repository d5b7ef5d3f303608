/**
 * Mermaid diagrams drawn as SVG, with the `mermaid` package loaded the first time one is shown
 * (most visits never load it). Strict security: no HTML labels, no scripts, no clicks; the SVG is
 * then shown as an image (app/utils/artifacts.ts `svgImageUrl`), which runs nothing and loads nothing.
 */
let loaded: Promise<typeof import('mermaid')['default']> | undefined
let counter = 0

/** The diagram `source` as SVG, or throws what is wrong with it. */
export async function renderMermaid(source: string, dark: boolean): Promise<string> {
  loaded ??= import('mermaid').then(module => module.default)
  const mermaid = await loaded
  mermaid.initialize({ startOnLoad: false, securityLevel: 'strict', theme: dark ? 'dark' : 'default', htmlLabels: false, flowchart: { htmlLabels: false } })
  const { svg } = await mermaid.render(`or3-mermaid-${++counter}`, source)
  return svg
}
