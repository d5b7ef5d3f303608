import { describe, expect, it } from 'vitest'
import { oneLine } from '../../../../server/lib/jobs/waits/tool-call-people'

describe('a model\'s words shown with a question', () => {
  it('are one line (blank lines and tabs fold into one space) and cut with an ellipsis', () => {
    expect(oneLine(`Counts words.${'\n'.repeat(40)}\tIts code:  \`\`\`js`, 300)).toBe('Counts words. Its code: ```js')
    expect(oneLine('x'.repeat(500), 300)).toHaveLength(300)
    expect(oneLine('x'.repeat(500), 300).endsWith('…')).toBe(true)
    // Linear however the whitespace is laid out (no pattern that backtracks).
    expect(oneLine(' \n'.repeat(200_000) + 'end', 300)).toBe('end')
  })
})
