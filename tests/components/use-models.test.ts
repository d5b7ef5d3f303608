/** The model list the pages share: whether the picked model reads images is unknown until it has loaded. */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { useModels } from '../../app/composables/useModels'

afterEach(() => vi.unstubAllGlobals())

describe('useModels', () => {
  it('does not say "no images" before the models have loaded, then says what the picked model takes', async () => {
    let answer!: (catalog: unknown) => void
    vi.stubGlobal('$fetch', () => new Promise(resolve => (answer = resolve)))
    const { imagesAccepted, refresh, selected } = useModels()
    const loading = refresh()
    // An image picked now is not refused for a model nobody knows yet.
    expect(imagesAccepted.value).toBeUndefined()
    answer({ models: [{ id: 'text-only', name: 'Text', acceptsImages: false }, { id: 'vision', name: 'Vision', acceptsImages: true }] })
    await loading
    expect(selected.value).toBe('text-only')
    expect(imagesAccepted.value).toBe(false)
    selected.value = 'vision'
    expect(imagesAccepted.value).toBe(true)
  })
})
