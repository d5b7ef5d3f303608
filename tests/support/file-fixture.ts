/**
 * What tests need running while they run (a built server, a fake upstream, a browser, a store):
 * started before them, stopped after them, and read through the object returned, which stands for
 * it once started. `useFileFixture` keeps one for all the tests of a file (or `describe`);
 * `useTestFixture` makes a fresh one for each test. After hooks run last-registered first, so a
 * fixture registered earlier (a fake upstream) outlives one registered later (the server that
 * calls it).
 */
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest'

type Start<T> = () => Promise<T> | T
type Stop<T> = (value: T) => Promise<unknown> | void

function standIn<T extends object>(name: string, current: () => T | undefined): T {
  return new Proxy({} as T, {
    get(_target, key) {
      const value = current()
      if (!value) throw new Error(`${name} is not running: it starts in a before hook, so read it inside a test or a later hook.`)
      const member = Reflect.get(value, key)
      return typeof member === 'function' ? member.bind(value) : member
    },
  })
}

/** One `name` for the tests of this file (or `describe`): started in `beforeAll`, stopped in `afterAll`. */
export function useFileFixture<T extends object>(name: string, start: Start<T>, stop: Stop<T>, timeoutMs?: number): T {
  let value: T | undefined
  beforeAll(async () => {
    value = await start()
  }, timeoutMs)
  afterAll(async () => {
    if (value) await stop(value)
    value = undefined
  })
  return standIn(name, () => value)
}

/** A fresh `name` for each test: started in `beforeEach`, stopped in `afterEach`. */
export function useTestFixture<T extends object>(name: string, start: Start<T>, stop: Stop<T>): T {
  let value: T | undefined
  beforeEach(async () => {
    value = await start()
  })
  afterEach(async () => {
    if (value) await stop(value)
    value = undefined
  })
  return standIn(name, () => value)
}
