import { describe, expect, it } from 'vitest'
import { modelWordsLine, oneLine } from '../../../../server/lib/jobs/waits/tool-call-people'

describe('a model\'s words shown with a question', () => {
  it('are one line (blank lines and tabs fold into one space) and cut with an ellipsis', () => {
    expect(oneLine(`Counts words.${'\n'.repeat(40)}\tIts code:  \`\`\`js`, 300)).toBe('Counts words. Its code: ```js')
    expect(oneLine('x'.repeat(500), 300)).toHaveLength(300)
    expect(oneLine('x'.repeat(500), 300).endsWith('…')).toBe(true)
    // Linear however the whitespace is laid out (no pattern that backtracks).
    expect(oneLine(' \n'.repeat(200_000) + 'end', 300)).toBe('end')
  })

  it('read as words: Markdown marks are taken out, so nothing looks like the card\'s own code view', () => {
    expect(modelWordsLine('Counts **word_count** of a text. Example:\n```json\n{ "text": "a b" }\n```', 300)).toBe('Counts word_count of a text. Example: { "text": "a b" }')
    expect(modelWordsLine('## Word counter\nSee [the docs](https://example.com/docs) and `args.text`.', 300)).toBe('Word counter See the docs (https://example.com/docs) and args.text.')
    expect(modelWordsLine('`'.repeat(100_000) + '*'.repeat(100_000) + '['.repeat(50_000) + 'end', 300)).toBe('['.repeat(299) + '…')
  })
})
