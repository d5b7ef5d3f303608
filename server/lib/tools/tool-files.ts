import { readdirSync } from 'node:fs'
import { join, relative, sep } from 'node:path'

const TOOL_FILE_PATTERN = /\.(?:ts|mts|js|mjs)$/
const NOT_A_TOOL_PATTERN = /\.d\.ts$|\.(?:test|spec)\.[mc]?[jt]s$/

/**
 * Lists tool files under `rootDir`, recursively, sorted. Files and folders whose name starts
 * with `_` are skipped (templates, shared helpers), as are type declarations and tests.
 * Paths are absolute. A missing folder means no tools.
 */
export function findToolFiles(rootDir: string): string[] {
  const found: string[] = []
  const visit = (dir: string) => {
    let entries
    try {
      entries = readdirSync(dir, { withFileTypes: true })
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return
      throw error
    }
    for (const entry of entries) {
      if (entry.name.startsWith('_') || entry.name.startsWith('.')) continue
      const path = join(dir, entry.name)
      if (entry.isDirectory()) visit(path)
      else if (entry.isFile() && TOOL_FILE_PATTERN.test(entry.name) && !NOT_A_TOOL_PATTERN.test(entry.name)) found.push(path)
    }
  }
  visit(rootDir)
  return found.sort()
}

/** A path relative to `baseDir` with forward slashes, as shown in start-up reports. */
export function displayPath(baseDir: string, path: string): string {
  return relative(baseDir, path).split(sep).join('/')
}
