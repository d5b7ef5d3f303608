/**
 * Workspaces as the tools and the file panel use them: paths made normal and confined (paths.ts),
 * each person's bytes and files bounded, text read and written as UTF-8, files found by glob and
 * lines by RE2 pattern (search.ts), edits of one file made one after another. Everything reads
 * and writes the store; nothing here touches the server's disk.
 *
 * Quotas are checked before a write, so two writes racing each other may pass a quota by one
 * file; they bound growth, they are not a ledger (as the conversation quotas).
 */
import type { WorkspaceFile, WorkspaceListing, WorkspaceUsage } from '../../../../shared/types/workspace'
import type { StoredWorkspaceFile, WorkspaceStore } from '../../stores/workspaces/workspace-store'
import { KeyedQueue } from '../../stores/settings/keyed-queue'
import { RefusalError } from '../../domain-error'
import { isInside, workspacePath } from './paths'
import { compileGlob, compilePattern } from './search'

export interface WorkspaceLimits {
  bytesPerUser: number
  filesPerUser: number
  fileBytes: number
}

/** One line grep found. */
export interface GrepMatch {
  path: string
  line: number
  text: string
}

/** Characters of a matching line grep returns (a minified file is one very long line). */
const GREP_LINE_CHARS = 300
/** Bytes grep reads at most in one call, so a search over a full workspace stays bounded. */
const GREP_SCAN_BYTES = 20 * 1024 * 1024

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toLocaleString('en', { maximumFractionDigits: 1 })} MiB`

/** The workspace of a conversation. */
export function threadWorkspaceId(threadId: string): string {
  return `thread:${threadId}`
}

/** The workspace of a workflow run: its steps' (and its child runs') scratch files, while it runs. */
export function runWorkspaceId(jobId: string): string {
  return `run:${jobId}`
}

/** Who a run's kept outputs belong to in the store: their person, apart from the files they keep themselves (and their quota). */
export function runOutputsOwner(userId: string): string {
  return `runs:${userId}`
}

/** The workspace a tool call works in: its conversation's, or its workflow run's (shared by the run's steps). */
export function workspaceIdFor(context: { threadId: string, jobId: string, workspaceId?: string }): string {
  if (context.workspaceId) return context.workspaceId
  return context.threadId.startsWith('workflow:') ? runWorkspaceId(context.jobId) : threadWorkspaceId(context.threadId)
}

/** Whether `bytes` look like text (no NUL in the first 8 KiB, and valid UTF-8). */
export function isText(bytes: Uint8Array): boolean {
  if (bytes.subarray(0, 8192).includes(0)) return false
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes)
    return true
  } catch {
    return false
  }
}

/** What code changed in a workspace, as a tool's result says it. */
export function changesReport(applied: { written: string[], deleted: string[], problems: string[] }): Record<string, string[]> {
  return {
    ...(applied.written.length > 0 ? { filesWritten: applied.written } : {}),
    ...(applied.deleted.length > 0 ? { filesDeleted: applied.deleted } : {}),
    ...(applied.problems.length > 0 ? { fileProblems: applied.problems } : {}),
  }
}

export class Workspaces {
  private readonly edits = new KeyedQueue()

  constructor(private readonly store: WorkspaceStore, readonly limits: WorkspaceLimits) {}

  /** Files under `folder` (the whole workspace by default), by path. */
  async list(workspaceId: string, folder = ''): Promise<WorkspaceFile[]> {
    const under = workspacePath(folder, { allowTop: true })
    return (await this.store.listFiles(workspaceId)).filter(file => isInside(file.path, under))
  }

  /** One file with its bytes; 404 when there is none. */
  async read(workspaceId: string, rawPath: string): Promise<StoredWorkspaceFile> {
    const path = workspacePath(rawPath)
    const file = await this.store.readFile(workspaceId, path)
    if (!file) throw new RefusalError(`There is no file ${path} in this workspace${await this.nearby(workspaceId, path)}.`, 404)
    return file
  }

  /** A file's text; refused for a file that is not text. */
  async readText(workspaceId: string, rawPath: string): Promise<{ file: StoredWorkspaceFile, text: string }> {
    const file = await this.read(workspaceId, rawPath)
    if (!isText(file.bytes)) throw new RefusalError(`${file.path} is a binary file (${file.size.toLocaleString('en')} bytes), not text.`, 400)
    return { file, text: new TextDecoder().decode(file.bytes) }
  }

  /** Creates or replaces a file, within the person's quota. */
  async write(workspaceId: string, userId: string, rawPath: string, content: Uint8Array | string): Promise<WorkspaceFile> {
    const path = workspacePath(rawPath)
    const bytes = typeof content === 'string' ? new TextEncoder().encode(content) : content
    return this.edits.run(`${workspaceId}\u0000${path}`, () => this.put(workspaceId, userId, path, bytes))
  }

  /**
   * Replaces `oldText` with `newText` in a text file: exactly one occurrence, or every one with
   * `all`. Edits of one file run one after another, so two at once both land.
   */
  async edit(workspaceId: string, userId: string, rawPath: string, oldText: string, newText: string, all = false): Promise<{ file: WorkspaceFile, replaced: number }> {
    const path = workspacePath(rawPath)
    return this.edits.run(`${workspaceId}\u0000${path}`, async () => {
      const { text } = await this.readText(workspaceId, path)
      if (oldText === '') throw new RefusalError('The text to replace is empty; to write a whole file use write.', 400)
      if (oldText === newText) throw new RefusalError('The new text is the same as the old; nothing to change.', 400)
      const count = occurrences(text, oldText)
      if (count === 0) throw new RefusalError(`The text to replace was not found in ${path}; read the file and copy the exact text, spaces and line breaks included.`, 400)
      if (count > 1 && !all) throw new RefusalError(`The text to replace occurs ${count} times in ${path}; include more of the text around it so it is found once, or pass all: true to replace every one.`, 400)
      // The result's size is known before it is built: a large file times a long replacement is refused without building it.
      const replaced = all ? count : 1
      const resultBytes = Buffer.byteLength(text) + replaced * (Buffer.byteLength(newText) - Buffer.byteLength(oldText))
      if (resultBytes > this.limits.fileBytes) throw new RefusalError(`${path} would be ${mib(resultBytes)} after ${replaced === 1 ? 'this edit' : `${replaced.toLocaleString('en')} replacements`}; a workspace file may be at most ${mib(this.limits.fileBytes)}. Replace fewer, or write it in smaller files.`, 400)
      const changed = all ? text.split(oldText).join(newText) : text.replace(oldText, () => newText)
      return { file: await this.put(workspaceId, userId, path, new TextEncoder().encode(changed)), replaced }
    })
  }

  /** Deletes a file; 404 when there is none. */
  async delete(workspaceId: string, rawPath: string): Promise<void> {
    const path = workspacePath(rawPath)
    if (!await this.store.deleteFile(workspaceId, path)) throw new RefusalError(`There is no file ${path} in this workspace.`, 404)
  }

  /** Files whose paths match `glob` (`*.md` anywhere, `src/**\/*.ts`). */
  async glob(workspaceId: string, glob: string): Promise<WorkspaceFile[]> {
    const matches = compileGlob(glob)
    return (await this.store.listFiles(workspaceId)).filter(file => matches(file.path))
  }

  /** Lines matching `pattern` (RE2) in the text files under `folder` (or matching `glob`), at most `maxMatches`. */
  async grep(workspaceId: string, pattern: string, options: { folder?: string, glob?: string, ignoreCase?: boolean, literal?: boolean, maxMatches: number }): Promise<{ matches: GrepMatch[], truncated: boolean, skipped: string[] }> {
    const expression = compilePattern(pattern, options)
    const inGlob = options.glob ? compileGlob(options.glob) : () => true
    const files = (await this.list(workspaceId, options.folder ?? '')).filter(file => inGlob(file.path))
    const matches: GrepMatch[] = []
    const skipped: string[] = []
    let scanned = 0
    for (const info of files) {
      if (scanned + info.size > GREP_SCAN_BYTES) {
        skipped.push(info.path)
        continue
      }
      scanned += info.size
      const file = await this.store.readFile(workspaceId, info.path)
      if (!file || !isText(file.bytes)) continue
      const lines = new TextDecoder().decode(file.bytes).split('\n')
      for (let index = 0; index < lines.length; index++) {
        if (!expression.matcher(lines[index]!).find()) continue
        if (matches.length === options.maxMatches) return { matches, truncated: true, skipped }
        const line = lines[index]!.replace(/\r$/, '')
        matches.push({ path: info.path, line: index + 1, text: line.length > GREP_LINE_CHARS ? `${line.slice(0, GREP_LINE_CHARS)}…` : line })
      }
      // Another request's turn between files.
      await new Promise(resolve => setImmediate(resolve))
    }
    return { matches, truncated: false, skipped }
  }

  /**
   * The workspace's files for code to work on, up to `maxBytes` together (the rest are listed in
   * `left`).
   */
  async snapshot(workspaceId: string, maxBytes: number): Promise<{ files: Record<string, Uint8Array>, left: string[] }> {
    const files: Record<string, Uint8Array> = {}
    const left: string[] = []
    let taken = 0
    for (const info of await this.store.listFiles(workspaceId)) {
      const file = taken + info.size <= maxBytes ? await this.store.readFile(workspaceId, info.path) : null
      if (!file) {
        left.push(info.path)
        continue
      }
      files[info.path] = file.bytes
      taken += info.size
    }
    return { files, left }
  }

  /**
   * Applies what code did to its copy of the workspace (files written, files deleted), each
   * through the usual checks; what was refused is named with why, and the rest still applies.
   */
  async applyChanges(workspaceId: string, userId: string, changes: { writes: Record<string, Uint8Array | string>, deletes: readonly string[] }): Promise<{ written: string[], deleted: string[], problems: string[] }> {
    const written: string[] = []
    const deleted: string[] = []
    const problems: string[] = []
    for (const [path, content] of Object.entries(changes.writes)) {
      try {
        written.push((await this.write(workspaceId, userId, path, content)).path)
      } catch (error) {
        problems.push(`${path}: ${(error as Error).message}`)
      }
    }
    for (const path of changes.deletes) {
      try {
        await this.delete(workspaceId, path)
        deleted.push(path)
      } catch (error) {
        problems.push(`${path}: ${(error as Error).message}`)
      }
    }
    return { written, deleted, problems }
  }

  /** What `userId` keeps in all their workspaces, beside the limits. */
  async usage(userId: string): Promise<WorkspaceUsage> {
    const kept = await this.store.usage(userId)
    return { ...kept, maxBytes: this.limits.bytesPerUser, maxFiles: this.limits.filesPerUser }
  }

  /** The id of a workflow run's workspace. */
  forRun(jobId: string): string {
    return runWorkspaceId(jobId)
  }

  /** The id of a conversation's workspace. */
  forThread(threadId: string): string {
    return threadWorkspaceId(threadId)
  }

  /** The conversation's workspace: its files and what its owner keeps in all workspaces. */
  async listing(threadId: string, userId: string): Promise<WorkspaceListing> {
    const [files, usage] = await Promise.all([this.store.listFiles(threadWorkspaceId(threadId)), this.usage(userId)])
    return { files, usage }
  }

  /** Deletes a conversation's files (before the conversation itself). */
  deleteThreadFiles(threadId: string): Promise<void> {
    return this.store.deleteWorkspace(threadWorkspaceId(threadId))
  }

  /**
   * Deletes what a workflow run keeps in its workspace: all of it (the run was deleted), or, once it
   * ended, its scratch files, keeping what is under `keep` (its long outputs, deleted with the run).
   */
  async deleteRunFiles(jobId: string, keep?: string): Promise<void> {
    const workspaceId = runWorkspaceId(jobId)
    if (keep === undefined) return this.store.deleteWorkspace(workspaceId)
    for (const file of await this.store.listFiles(workspaceId)) {
      if (!isInside(file.path, keep)) await this.store.deleteFile(workspaceId, file.path)
    }
  }

  /** Deletes every file `userId` keeps, their runs' kept outputs included. */
  async deleteUser(userId: string): Promise<void> {
    await this.store.deleteUserFiles(runOutputsOwner(userId))
    await this.store.deleteUserFiles(userId)
  }

  /**
   * Writes a long step output a workflow run keeps (workflows/output-files.ts) in its workspace.
   * Not counted in the person's workspace quota (their conversations' files keep all of it): the
   * run history's size caps count it with its run, which takes it along when it goes. A file over
   * the largest a workspace file may be is refused all the same.
   */
  async writeRunOutput(jobId: string, userId: string, rawPath: string, text: string): Promise<void> {
    const path = workspacePath(rawPath)
    const bytes = new TextEncoder().encode(text)
    if (bytes.byteLength > this.limits.fileBytes) throw new RefusalError(`${path} would be ${mib(bytes.byteLength)}; a workspace file may be at most ${mib(this.limits.fileBytes)}.`, 400)
    await this.store.writeFile({ workspaceId: runWorkspaceId(jobId), userId: runOutputsOwner(userId), path, bytes })
  }

  private async put(workspaceId: string, userId: string, path: string, bytes: Uint8Array): Promise<WorkspaceFile> {
    const { fileBytes, bytesPerUser, filesPerUser } = this.limits
    if (bytes.byteLength > fileBytes) throw new RefusalError(`${path} would be ${mib(bytes.byteLength)}; a workspace file may be at most ${mib(fileBytes)}. Write it in smaller files.`, 400)
    const files = await this.store.listFiles(workspaceId)
    const existing = files.find(file => file.path === path)
    if (!existing) {
      if (files.some(file => file.path.startsWith(`${path}/`))) throw new RefusalError(`${path} is a folder in this workspace; choose another name for the file.`, 400)
      const blocking = files.find(file => path.startsWith(`${file.path}/`))
      if (blocking) throw new RefusalError(`${blocking.path} is a file, so it cannot also be a folder; choose another path.`, 400)
    }
    const kept = await this.store.usage(userId)
    if (!existing && kept.files + 1 > filesPerUser) throw new RefusalError(`You keep ${kept.files.toLocaleString('en')} workspace files, the most one person may. Delete files you no longer need (the file panel of a conversation, or deleting old conversations).`, 409)
    if (kept.bytes - (existing?.size ?? 0) + bytes.byteLength > bytesPerUser) throw new RefusalError(`Your workspace files would pass ${mib(bytesPerUser)}, the most one person may keep. Delete files you no longer need (the file panel of a conversation, or deleting old conversations).`, 409)
    return this.store.writeFile({ workspaceId, userId, path, bytes })
  }

  /** ", but there is …" naming files with the same name elsewhere, to help a model that guessed the folder. */
  private async nearby(workspaceId: string, path: string): Promise<string> {
    const name = path.split('/').at(-1)!
    const same = (await this.store.listFiles(workspaceId)).filter(file => file.path.split('/').at(-1) === name).slice(0, 3)
    return same.length > 0 ? `; there is ${same.map(file => file.path).join(', ')}` : ''
  }
}

function occurrences(text: string, part: string): number {
  let count = 0
  for (let at = text.indexOf(part); at !== -1; at = text.indexOf(part, at + part.length)) count++
  return count
}
