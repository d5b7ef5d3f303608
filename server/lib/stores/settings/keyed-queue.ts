/**
 * Runs work for one key at a time, in order (read-modify-write of one setting), while work for
 * other keys runs freely. In this process only: settings changed from two instances at the same
 * moment can still race (the last write wins), which the callers accept for a person's own lists.
 */
export class KeyedQueue {
  private readonly tails = new Map<string, Promise<unknown>>()

  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const next = (this.tails.get(key) ?? Promise.resolve()).catch(() => {}).then(work)
    this.tails.set(key, next)
    void next.catch(() => {}).finally(() => {
      if (this.tails.get(key) === next) this.tails.delete(key)
    })
    return next
  }
}
