/**
 * Amounts held at once (open streams, bytes of bodies being read), in total and per key of
 * several dimensions (a user, a job, a client address), each against its cap. The caps that
 * refuse differ by what is counted; the counting is this one thing: `wouldPass` names the first
 * cap (in the caller's order) that more would pass, `hold` takes it and returns the idempotent
 * release.
 */
export type Caps<Dimension extends string> = Record<Dimension | 'total', number>

export class CapacityCounter<Dimension extends string> {
  private total = 0
  private readonly byKey = new Map<Dimension, Map<string, number>>()

  constructor(private readonly caps: Caps<Dimension>) {}

  /** Held now, in total or by one key of one dimension. */
  held(dimension: Dimension | 'total', key?: string): number {
    if (dimension === 'total') return this.total
    return key === undefined ? 0 : this.byKey.get(dimension)?.get(key) ?? 0
  }

  /** The first of `order` whose cap `amount` more for `keys` would pass, else undefined. A dimension without a key is not counted. */
  wouldPass(amount: number, keys: Partial<Record<Dimension, string>>, order: ReadonlyArray<Dimension | 'total'>): Dimension | 'total' | undefined {
    return order.find((dimension) => {
      if (dimension !== 'total' && keys[dimension as Dimension] === undefined) return false
      return this.held(dimension, keys[dimension as Dimension]) + amount > this.caps[dimension]
    })
  }

  /** Holds `amount` for `keys` (unchecked: call `wouldPass` first). Returns the release, idempotent. */
  hold(amount: number, keys: Partial<Record<Dimension, string>>): () => void {
    const entries = Object.entries(keys).filter((entry): entry is [Dimension, string] => entry[1] !== undefined)
    this.total += amount
    for (const [dimension, key] of entries) this.add(dimension, key, amount)
    let released = false
    return () => {
      if (released) return
      released = true
      this.total -= amount
      for (const [dimension, key] of entries) this.add(dimension, key, -amount)
    }
  }

  private add(dimension: Dimension, key: string, by: number): void {
    let counts = this.byKey.get(dimension)
    if (!counts) this.byKey.set(dimension, counts = new Map())
    const next = (counts.get(key) ?? 0) + by
    if (next <= 0) counts.delete(key)
    else counts.set(key, next)
  }
}
