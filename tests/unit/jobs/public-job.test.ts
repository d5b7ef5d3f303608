/** How a job is named in lists: its question's first line, or the files it was sent with (issue 29). */
import { describe, expect, it } from 'vitest'
import { toJobSummary } from '../../../server/lib/jobs/public-job'
import { textFilePart } from '../../../server/lib/attachments/attachments'
import type { BackgroundJob } from '../../../shared/types/job'

function job(content: unknown): BackgroundJob {
  return { id: 'j1', userId: 'u1', threadId: 't1', messageId: 'm1', model: 'or3/offline-demo', status: 'complete', content: '', reasoning: '', toolRounds: [], chunksReceived: 0, createdAt: 1, updatedAt: 1, request: { model: 'or3/offline-demo', messages: [{ role: 'user', content }] } } as unknown as BackgroundJob
}

const csv = textFilePart({ name: 'sales.csv', mediaType: 'text/csv' }, 'a,b\n1,2')
const notes = textFilePart({ name: 'notes.md', mediaType: 'text/markdown' }, '# Notes')

describe('a job\'s line in lists', () => {
  it.each([
    ['words', 'What is 2+2?\nsecond line', 'What is 2+2?'],
    ['words and a file: the words', [{ type: 'text', text: 'Sum the second column' }, csv], 'Sum the second column'],
    ['a file only: its name', [csv], 'sales.csv'],
    ['two files: how many and their names', [csv, notes], '2 files: sales.csv, notes.md'],
    ['an image only', [{ type: 'or3_attachment', id: 'a1' }], 'An attached file'],
    ['an image and a file', [{ type: 'or3_attachment', id: 'a1' }, csv], '2 files: sales.csv'],
    ['blank words and an image', [{ type: 'text', text: '  \n ' }, { type: 'or3_attachment', id: 'a1' }, { type: 'or3_attachment', id: 'a2' }], '2 attached files'],
  ])('%s', (_case, content, line) => {
    expect(toJobSummary(job(content)).prompt).toBe(line)
  })

  it('has no line when nothing was asked', () => {
    expect(toJobSummary(job('')).prompt).toBeUndefined()
  })
})
