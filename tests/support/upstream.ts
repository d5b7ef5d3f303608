/**
 * The set-up most server tests share: the fake OpenRouter (a real HTTP server) for the whole file,
 * and a registry holding exactly the built-in tools before each test.
 */
import { afterAll, beforeAll } from 'vitest'
import { builtinServerTools } from '../../server/lib/tools/builtin'
import { clearServerTools, registerServerTool } from '../../server/lib/tools/registry'
import { startFakeOpenRouter, type FakeOpenRouter } from './fake-openrouter'

/**
 * Starts the fake OpenRouter before the file's tests and closes it after them. The returned
 * object stands for the running fake (use it inside tests and hooks, not at import time).
 */
export function useFakeOpenRouter(): FakeOpenRouter {
  let started: FakeOpenRouter | undefined
  beforeAll(async () => {
    started = await startFakeOpenRouter()
  })
  afterAll(async () => {
    await started?.close()
  })
  return new Proxy({} as FakeOpenRouter, {
    get(_target, key) {
      if (!started) throw new Error('The fake OpenRouter starts in beforeAll; use it inside a test or hook.')
      const value = Reflect.get(started, key)
      return typeof value === 'function' ? value.bind(started) : value
    },
  })
}

/** Empties the tool registry and registers the built-in tools (call it in `beforeEach`). */
export function registerBuiltinToolsOnly(): void {
  clearServerTools()
  for (const tool of builtinServerTools) registerServerTool(tool.definition, tool.handler, tool.options)
}
