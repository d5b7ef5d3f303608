/**
 * Math typesetting for answers (`$…$` inline, `$$…$$` on its own lines) with KaTeX, and its
 * stylesheet. Loaded on demand by `loadMath()` in markdown.ts, the first time a message on the page
 * may hold a formula: KaTeX and its CSS are a third of the app's script, and most pages have no math.
 */
import type MarkdownIt from 'markdown-it'
import markdownItKatex from '@vscode/markdown-it-katex'
import type { KatexOptions } from 'katex'
// The CommonJS build, which @vscode/markdown-it-katex requires too: importing 'katex' (its ES build)
// would put KaTeX in the bundle twice.
import katex from 'katex/dist/katex.js'
import 'katex/dist/katex.min.css'

/**
 * Adds math to `markdown`: `trust: false` (no links, classes, styles or ids from a formula),
 * bounded sizes and macro expansion, and formulas longer than `maxFormulaChars` left as their
 * source, so a formula in an answer can neither run anything nor take the page down.
 */
export function installMath(markdown: MarkdownIt, maxFormulaChars: number): void {
  const { escapeHtml } = markdown.utils
  markdown.use(markdownItKatex, {
    katex: {
      renderToString: (latex: string, options: KatexOptions) => latex.length > maxFormulaChars
        ? `<code class="math-source">${escapeHtml(latex)}</code>`
        : katex.renderToString(latex, options),
    },
    throwOnError: false,
    trust: false,
    strict: 'ignore',
    maxSize: 20,
    maxExpand: 200,
    output: 'htmlAndMathml',
  })
}
