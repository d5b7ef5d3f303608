/**
 * What a test file needs running while its tests run (a built server, a fake upstream, a browser):
 * started in `beforeAll`, stopped in `afterAll`, and read through the object returned, which
 * stands for it once started. After hooks run last-registered first, so a fixture registered
 * earlier (a fake upstream) outlives one registered later (the server that calls it).
 */
import { afterAll, beforeAll } from 'vitest'

export function useFileFixture<T extends object>(name: string, start: () => Promise<T>, stop: (value: T) => Promise<unknown> | void, timeoutMs?: number): T {
  let value: T | undefined
  beforeAll(async () => {
    value = await start()
  }, timeoutMs)
  afterAll(async () => {
    if (value) await stop(value)
  })
  return new Proxy({} as T, {
    get(_target, key) {
      if (!value) throw new Error(`${name} is not running: it starts in beforeAll, so read it inside a test or a later hook.`)
      const member = Reflect.get(value, key)
      return typeof member === 'function' ? member.bind(value) : member
    },
  })
}
