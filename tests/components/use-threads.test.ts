/** The conversation list the sidebar and pages share. */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { useThreads } from '../../app/composables/useThreads'

afterEach(() => vi.unstubAllGlobals())

const listed = (title: string) => ({ threads: [{ id: 't1', title, createdAt: 1, updatedAt: 1 }] })

describe('useThreads', () => {
  it('keeps the newest list when two reads overlap and the older one answers last', async () => {
    const answers: Array<(list: unknown) => void> = []
    vi.stubGlobal('$fetch', () => new Promise(resolve => answers.push(resolve)))
    const { threads, refresh } = useThreads()
    // Read when the answer ended (before the model's title was written) ...
    const before = refresh()
    // ... and read again when the page saw the new title.
    const after = refresh()
    answers[1]!(listed('Calculating 7*6'))
    await after
    expect(threads.value.map(thread => thread.title)).toEqual(['Calculating 7*6'])
    // The first read's answer arrives late: the old title does not come back.
    answers[0]!(listed('Palette test: what is 7*6?'))
    await before
    expect(threads.value.map(thread => thread.title)).toEqual(['Calculating 7*6'])
  })
})
