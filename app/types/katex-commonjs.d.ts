// KaTeX's CommonJS build, the one @vscode/markdown-it-katex requires (see app/utils/markdown-math.ts).
declare module 'katex/dist/katex.js' {
  import katex from 'katex'
  export default katex
}
