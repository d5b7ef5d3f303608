import { describe, expect, it } from 'vitest'
import { passagesOf } from '../../../server/lib/knowledge/passages'

describe('cutting a document into passages', () => {
  it('follows Markdown headings, naming each passage\'s path of headings', () => {
    const passages = passagesOf({ kind: 'markdown', text: '# Handbook\n\nWelcome.\n\n## Travel\n\nBook trains.\n\n### Abroad\n\nAsk first.\n\n## Expenses ##\n\nMeals up to 40 euros.' })
    expect(passages).toEqual([
      { text: 'Welcome.', heading: 'Handbook' },
      { text: 'Book trains.', heading: 'Handbook › Travel' },
      { text: 'Ask first.', heading: 'Handbook › Travel › Abroad' },
      { text: 'Meals up to 40 euros.', heading: 'Handbook › Expenses' },
    ])
  })

  it('keeps a "# comment" inside a code fence as code, not a heading', () => {
    const passages = passagesOf({ kind: 'markdown', text: '# Setup\n\n```sh\n# install it\nnpm ci\n```' })
    expect(passages).toEqual([{ text: '```sh\n# install it\nnpm ci\n```', heading: 'Setup' }])
  })

  it('cuts a long section into passages of at most the size, each starting with the end of the one before', () => {
    const sentences = Array.from({ length: 60 }, (_, index) => `Sentence number ${index} says something about the policy.`)
    const passages = passagesOf({ kind: 'markdown', text: `# Policy\n\n${sentences.join(' ')}` }, { maxChars: 400, overlapChars: 80 })
    expect(passages.length).toBeGreaterThan(5)
    for (const passage of passages) {
      expect(passage.text.length).toBeLessThanOrEqual(400)
      expect(passage.heading).toBe('Policy')
    }
    // Every sentence is whole in some passage, and each passage after the first repeats some of the one before.
    for (const sentence of sentences) expect(passages.some(passage => passage.text.includes(sentence))).toBe(true)
    for (const [index, passage] of passages.entries()) {
      if (index === 0) continue
      const firstWords = passage.text.split(' ').slice(0, 3).join(' ')
      expect(passages[index - 1]!.text).toContain(firstWords)
    }
  })

  it('keeps a PDF\'s passages within their page and numbers the pages', () => {
    expect(passagesOf({ kind: 'pages', pages: ['Travel policy\nBook trains.', '', 'Expenses\n\nMeals.'] })).toEqual([
      { text: 'Travel policy\nBook trains.', page: 1 },
      { text: 'Expenses\n\nMeals.', page: 3 },
    ])
  })

  it('keeps a table\'s rows whole, with the header in every passage', () => {
    const rows = Array.from({ length: 40 }, (_, index) => [`Person ${index}`, `City ${index}`])
    const passages = passagesOf({ kind: 'table', header: ['name', 'city'], rows }, { maxChars: 300, overlapChars: 0 })
    expect(passages.length).toBeGreaterThan(3)
    expect(passages[0]!.text.startsWith('name | city\nname: Person 0; city: City 0')).toBe(true)
    expect(passages[0]!.heading).toMatch(/^Rows 1–\d+$/)
    expect(passages.every(passage => passage.text.startsWith('name | city\n'))).toBe(true)
    expect(passages.flatMap(passage => passage.text.split('\n').slice(1))).toHaveLength(40)
  })

  it('reads hostile text in one pass: a megabyte of hashes, of spaces, one endless word', () => {
    const hashes = passagesOf({ kind: 'markdown', text: '#'.repeat(1_000_000) })
    expect(hashes.map(passage => passage.text).join('')).toHaveLength(1_000_000)
    expect(passagesOf({ kind: 'markdown', text: `# ${' '.repeat(1_000_000)}x` }).length).toBeGreaterThan(0)
    const word = passagesOf({ kind: 'markdown', text: 'x'.repeat(100_000) })
    expect(word.every(passage => passage.text.length <= 1_000)).toBe(true)
  })
})
