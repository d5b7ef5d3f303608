/** Toast and notification previews show an answer's words, not its markdown (issue 29). */
import { describe, expect, it } from 'vitest'
import { plainPreview } from '../../app/utils/plain-text'

describe('plainPreview', () => {
  it.each([
    ['In **Asia/Tokyo** it is **Tue 10:00** (UTC+09:00).', 'In Asia/Tokyo it is Tue 10:00 (UTC+09:00).'],
    ['`12 * 7` = **84**\n\n_Answered by the offline demo model with `calculate`._', '12 * 7 = 84 Answered by the offline demo model with calculate.'],
    ['# Title\n\n- one\n- two\n> quoted', 'Title one two quoted'],
    ['See [the docs](https://example.com/a_b) and ![a cat](/cat.png).', 'See the docs and a cat.'],
    ['```ts\nconst x = 1\n```', 'const x = 1'],
    ['snake_case_name and 2*3*4 stay', 'snake_case_name and 2*3*4 stay'],
    ['~~old~~ *new* __bold__', 'old new bold'],
  ])('%j → %j', (markdown, plain) => {
    expect(plainPreview(markdown)).toBe(plain)
  })

  it('cuts at the length with an ellipsis, and reads only the start of a huge answer', () => {
    expect(plainPreview('word '.repeat(100), 20)).toBe('word word word word…')
    const hostile = `${'['.repeat(50_000)}${'*_'.repeat(50_000)}`
    expect(plainPreview(hostile).length).toBeLessThanOrEqual(140)
  })
})
