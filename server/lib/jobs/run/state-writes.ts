/**
 * A workflow run's state, written as it changes without a write per change: a run of many quick
 * steps changes its state many times a millisecond, and the state grows with every step, so one
 * copy, one viewer frame and one store write per change made the work grow with the square of the
 * run (a 1.5 MB state rewritten at every step held the event loop for seconds).
 *
 * One write is in flight at a time; changes that arrive meanwhile (or in the same turn of the event
 * loop) are taken together by the next, which copies the state as it is then. Every change's
 * promise resolves once a write that includes it is stored (`true`) or refused (`false`), so what
 * waits for its change to be kept (a tool step's start, before its effect) waits no longer than one
 * write behind. Writes are not spaced out on purpose: a slow store batches more changes into each
 * by itself, and a loop's iteration waits for its end to be stored before the next begins.
 */
import type { WorkflowState } from '../../../../shared/types/workflow'

export class CoalescedStateWrites {
  private latest: WorkflowState | undefined
  private changes = 0
  private written = 0
  private draining: Promise<void> | undefined
  private readonly waiting: Array<{ change: number, resolve: (stored: boolean) => void }> = []

  /** `write` stores (and shows) a copy of the state; resolves `true` once stored. */
  constructor(private readonly write: (state: WorkflowState) => Promise<boolean>) {}

  /** The run's state changed (`state` is the live object): resolves once a write with this change is done. */
  changed(state: WorkflowState): Promise<boolean> {
    this.latest = state
    const change = ++this.changes
    const done = new Promise<boolean>(resolve => this.waiting.push({ change, resolve }))
    this.draining ??= this.drain()
    return done
  }

  /** Resolves when every change so far is written (before the run's end is). */
  async settled(): Promise<void> {
    while (this.draining) await this.draining
  }

  private async drain(): Promise<void> {
    try {
      while (this.written < this.changes) {
        // Changes of this turn of the event loop go together.
        await new Promise(resolve => setImmediate(resolve))
        const upTo = this.changes
        let stored = false
        try {
          stored = await this.write(structuredClone(this.latest!))
        } catch {
          stored = false
        }
        this.written = upTo
        for (let index = this.waiting.length - 1; index >= 0; index--) {
          const waiter = this.waiting[index]!
          if (waiter.change > upTo) continue
          this.waiting.splice(index, 1)
          waiter.resolve(stored)
        }
      }
    } finally {
      this.draining = undefined
    }
  }
}
