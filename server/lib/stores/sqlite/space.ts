/**
 * Giving deleted rows' disk space back. The app's sqlite file uses incremental auto-vacuum: pages
 * freed by deletes (expired runs and jobs, a deleted account) are kept on a free list until
 * `reclaim` moves them off the end of the file, a few hundred pages a step with a turn of the
 * event loop between steps, so no answer waits on it for more than a moment; the file shrinks at
 * the checkpoint that follows. A file made before this is switched over once, at start-up
 * (`useIncrementalVacuum`: a full VACUUM, before the server takes requests).
 */
import type { Database } from 'better-sqlite3'

/** Pages one step frees at most (4 KB each: a megabyte). */
export const RECLAIM_PAGES_PER_STEP = 256

/** Steps one pass takes at most (the rest waits for the next pass). */
const RECLAIM_STEPS_PER_PASS = 400

/** How the file stands: its pages, those on the free list, and their size. */
export interface SqliteSpaceStats {
  pageSize: number
  pageCount: number
  freePages: number
}

/** Sets `db` to incremental auto-vacuum: at once on a new file, by a VACUUM (once) on one that has tables. */
export function useIncrementalVacuum(db: Database): void {
  if (db.pragma('auto_vacuum', { simple: true }) === 2) return
  db.pragma('auto_vacuum = INCREMENTAL')
  const tables = (db.prepare('SELECT count(*) AS n FROM sqlite_master').get() as { n: number }).n
  if (tables > 0) db.exec('VACUUM')
}

/** The file's free pages, given back in small steps (see the file comment). */
export class SqliteSpace {
  private reclaiming: Promise<{ freedPages: number, steps: number }> | undefined

  constructor(private readonly db: Database, private readonly pagesPerStep = RECLAIM_PAGES_PER_STEP) {}

  stats(): SqliteSpaceStats {
    return {
      pageSize: this.db.pragma('page_size', { simple: true }) as number,
      pageCount: this.db.pragma('page_count', { simple: true }) as number,
      freePages: this.db.pragma('freelist_count', { simple: true }) as number,
    }
  }

  /** Frees the free list's pages step by step (one pass at a time), then checkpoints so the file shrinks. */
  reclaim(): Promise<{ freedPages: number, steps: number }> {
    this.reclaiming ??= this.pass().finally(() => {
      this.reclaiming = undefined
    })
    return this.reclaiming
  }

  private async pass(): Promise<{ freedPages: number, steps: number }> {
    let freedPages = 0
    let steps = 0
    while (steps < RECLAIM_STEPS_PER_PASS && this.db.open) {
      const free = this.db.pragma('freelist_count', { simple: true }) as number
      if (free === 0) break
      this.db.pragma(`incremental_vacuum(${Math.min(free, this.pagesPerStep)})`)
      freedPages += free - (this.db.pragma('freelist_count', { simple: true }) as number)
      steps++
      await new Promise(resolve => setImmediate(resolve))
    }
    // A passive checkpoint never waits for readers; the file is cut to its new size once the log is written back.
    if (freedPages > 0 && this.db.open) this.db.pragma('wal_checkpoint(PASSIVE)')
    return { freedPages, steps }
  }

  close(): void {
    if (this.db.open) this.db.close()
  }
}
