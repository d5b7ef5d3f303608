import { describe, expect, it } from 'vitest'
import { artifactKey, artifactsIn, MAX_ARTIFACT_CHARS, MAX_ARTIFACTS } from '../../../shared/artifacts'

const fence = (language: string, code: string, marker = '```') => `${marker}${language}\n${code}\n${marker}`

describe('artifactsIn', () => {
  it('finds HTML pages, SVG images, Mermaid diagrams and long Markdown documents, each titled, in order', () => {
    const longDoc = ['# Trip plan', '', ...Array.from({ length: 25 }, (_, index) => `- day ${index + 1}`)].join('\n')
    const text = [
      'Here is the page:',
      fence('html', '<!doctype html>\n<html><head><title>Landing page</title></head><body><h1>Hi</h1></body></html>'),
      'And a picture:',
      fence('svg', '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><title>Dot</title><circle r="4"/></svg>'),
      fence('mermaid', 'flowchart LR\n  A --> B'),
      fence('markdown', longDoc),
      fence('ts', 'const html = "<html>"'),
      fence('markdown', '# Short\n\nnot a document'),
    ].join('\n\n')
    expect(artifactsIn(text).map(({ index, kind, title }) => ({ index, kind, title }))).toEqual([
      { index: 0, kind: 'html', title: 'Landing page' },
      { index: 1, kind: 'svg', title: 'Dot' },
      { index: 2, kind: 'mermaid', title: 'flowchart diagram' },
      { index: 3, kind: 'markdown', title: 'Trip plan' },
    ])
    expect(artifactsIn(text)[0]!.code).toContain('<h1>Hi</h1>')
  })

  it('knows an unlabelled or XML block by how it starts, a title from the fence, and ~~~ fences', () => {
    const text = [
      fence('', '<svg viewBox="0 0 1 1"></svg>'),
      fence('xml', '<html><body>x</body></html>'),
      fence('html title="Pricing table"', '<table></table>', '~~~~'),
      fence('xml', '<note/>'),
    ].join('\n')
    expect(artifactsIn(text).map(({ kind, title }) => `${kind}:${title}`)).toEqual(['svg:SVG image', 'html:HTML page', 'html:Pricing table'])
  })

  it('stays bounded: at most 20 artifacts, none past the size limit, and an unclosed fence runs to the end', () => {
    const many = Array.from({ length: 30 }, (_, index) => fence('svg', `<svg id="${index}"></svg>`)).join('\n')
    expect(artifactsIn(many)).toHaveLength(MAX_ARTIFACTS)
    expect(artifactsIn(fence('html', `<html>${'x'.repeat(MAX_ARTIFACT_CHARS)}</html>`))).toEqual([])
    expect(artifactsIn('```html\n<html><body>cut off')).toEqual([expect.objectContaining({ kind: 'html', code: '<html><body>cut off' })])
    // A million fence characters on one line, and many unclosed fences: still one quick pass.
    expect(artifactsIn('`'.repeat(1_000_000))).toEqual([])
    expect(artifactsIn('```\n'.repeat(50_000))).toEqual([])
  })

  it('names versions of one thing alike: kind and title, whatever the case', () => {
    expect(artifactKey({ kind: 'html', title: 'Landing Page' })).toBe(artifactKey({ kind: 'html', title: 'landing page' }))
    expect(artifactKey({ kind: 'html', title: 'Landing page' })).not.toBe(artifactKey({ kind: 'svg', title: 'Landing page' }))
  })
})
