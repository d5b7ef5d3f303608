/**
 * Paths inside a workspace, as models and people write them, made into one normal form or refused.
 * A workspace lives in the store, not on a disk, so nothing can escape it through the file system;
 * these rules keep every name one file has a single spelling and keep names readable where they
 * are shown and downloaded: `/notes.md`, `./notes.md` and `a/../notes.md` are `notes.md`; a path
 * that climbs above the top (`../x`), holds control characters, or names `.`/`..` in disguise
 * (`%2e%2e`) is refused with what to write instead.
 */
import { RefusalError } from '../../domain-error'

export const MAX_PATH_CHARS = 512
const MAX_SEGMENT_CHARS = 128
const MAX_DEPTH = 16

// Control characters (C0, DEL, C1) and the line and paragraph separators.
// eslint-disable-next-line no-control-regex
const FORBIDDEN = /[\u0000-\u001F\u007F-\u009F\u2028\u2029]/

function refuse(raw: string, why: string): never {
  throw new RefusalError(`"${raw.slice(0, 80)}" is not a workspace path: ${why}. Use a relative path such as notes.md or src/app.js.`, 400)
}

/** `raw` as a normal workspace path (`dir/file.ext`); `''` is the workspace's top, allowed only with `allowTop`. */
export function workspacePath(raw: unknown, options: { allowTop?: boolean } = {}): string {
  if (typeof raw !== 'string') refuse(String(raw), 'it must be text')
  if (raw.length > MAX_PATH_CHARS) refuse(raw, `it is longer than ${MAX_PATH_CHARS} characters`)
  if (FORBIDDEN.test(raw)) refuse(raw, 'it holds control characters')
  const segments: string[] = []
  for (const segment of raw.normalize('NFC').replaceAll('\\', '/').split('/')) {
    const trimmed = segment.trim()
    if (trimmed === '' || trimmed === '.') continue
    if (trimmed === '..') {
      if (segments.length === 0) refuse(raw, 'it points above the workspace')
      segments.pop()
      continue
    }
    if (/^[.\s]*$/.test(decodedOnce(trimmed))) refuse(raw, 'a part of it stands for "." or ".."')
    if (trimmed.length > MAX_SEGMENT_CHARS) refuse(raw, `a part of it is longer than ${MAX_SEGMENT_CHARS} characters`)
    segments.push(trimmed)
  }
  if (segments.length > MAX_DEPTH) refuse(raw, `it is more than ${MAX_DEPTH} folders deep`)
  if (segments.length === 0 && !options.allowTop) refuse(raw, 'it names no file')
  return segments.join('/')
}

function decodedOnce(segment: string): string {
  try {
    return decodeURIComponent(segment)
  } catch {
    return segment
  }
}

/** Whether `path` is `folder` itself or inside it (`''`: the top holds everything). */
export function isInside(path: string, folder: string): boolean {
  return folder === '' || path === folder || path.startsWith(`${folder}/`)
}
