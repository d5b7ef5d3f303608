/** The "tools changed" feed for open pages: bursts coalesced, versions that only grow, subscriptions ended at shutdown. */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { ToolChangeFeed } from '../../../server/lib/tools/tool-changes'
import { clearServerTools, onServerToolsChanged, registerServerTool, unregisterServerTool } from '../../../server/lib/tools/registry'

afterEach(() => {
  vi.useRealTimers()
  clearServerTools()
})

describe('tool change feed', () => {
  it('turns a burst of registry changes into one signal with a new version, and ends its subscribers at shutdown', () => {
    vi.useFakeTimers()
    const feed = new ToolChangeFeed(250)
    const stop = onServerToolsChanged(feed.notify)
    const versions: number[] = []
    const ended = vi.fn()
    feed.subscribe(version => versions.push(version), ended)

    for (let index = 0; index < 40; index++) {
      registerServerTool({ type: 'function', function: { name: `tool_${index}`, parameters: { type: 'object', properties: {} } } }, () => 'ok')
    }
    expect(versions).toEqual([])
    vi.advanceTimersByTime(250)
    expect(versions).toEqual([1])

    unregisterServerTool('tool_3')
    // Removing a name that is not registered changes nothing.
    unregisterServerTool('no_such_tool')
    vi.advanceTimersByTime(250)
    expect(versions).toEqual([1, 2])
    expect(feed.current).toBe(2)

    stop()
    registerServerTool({ type: 'function', function: { name: 'late', parameters: { type: 'object', properties: {} } } }, () => 'ok')
    vi.advanceTimersByTime(1_000)
    expect(versions).toEqual([1, 2])

    feed.notify()
    feed.close()
    vi.advanceTimersByTime(1_000)
    expect(versions).toEqual([1, 2])
    expect(ended).toHaveBeenCalledTimes(1)
    expect(feed.size).toBe(0)
  })
})
