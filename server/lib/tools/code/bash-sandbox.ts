/**
 * A shell command run in a bubblewrap sandbox (`bwrap`, Debian's `bubblewrap`): new namespaces of
 * every kind (no network, its own process tree, no view of the server's processes), the system's
 * programs read-only, an empty /tmp, no environment but PATH and HOME, and the workspace's files
 * copied into a directory mounted at /workspace (its working directory). Its time is limited
 * (the whole sandbox is killed at the deadline), its memory and file sizes by `ulimit`, its output
 * cut. What it leaves in /workspace is read back and compared with what went in: new and changed
 * files and deleted ones are returned for the caller to apply through the workspace's checks.
 */
import { spawn } from 'node:child_process'
import { accessSync, constants, lstatSync } from 'node:fs'
import { mkdtemp, mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { delimiter, dirname, join, relative } from 'node:path'

export interface ShellRun {
  command: string
  /** The workspace's files, by path. */
  files: Record<string, Uint8Array>
  timeoutMs: number
  memoryMb: number
  outputChars: number
}

export interface ShellOutcome {
  exitCode: number | null
  stdout: string
  stderr: string
  timedOut: boolean
  /** Files created or changed, by workspace path. */
  writes: Record<string, Uint8Array>
  deletes: string[]
  /** Files left in /workspace that were not read back (too many, too large). */
  skipped: string[]
}

/** Files and bytes read back from /workspace at most. */
const READ_BACK_FILES = 500
const READ_BACK_BYTES = 50 * 1024 * 1024

/** The bwrap program on PATH, or undefined. */
export function findBubblewrap(path = process.env.PATH ?? ''): string | undefined {
  for (const dir of path.split(delimiter).filter(Boolean)) {
    const candidate = join(dir, 'bwrap')
    try {
      accessSync(candidate, constants.X_OK)
      return candidate
    } catch {}
  }
  return undefined
}

/** The top-level system directories, bound read-only (or as the symlinks they are on a merged-/usr system). */
function systemMounts(): string[] {
  const args = ['--ro-bind', '/usr', '/usr']
  for (const dir of ['/bin', '/sbin', '/lib', '/lib64', '/lib32']) {
    try {
      const info = lstatSync(dir)
      if (info.isSymbolicLink()) args.push('--symlink', `usr${dir}`, dir)
      else args.push('--ro-bind', dir, dir)
    } catch {}
  }
  for (const file of ['/etc/alternatives', '/etc/ld.so.cache', '/etc/ssl/certs', '/etc/localtime']) args.push('--ro-bind-try', file, file)
  return args
}

async function readBack(root: string): Promise<{ files: Map<string, Uint8Array>, skipped: string[] }> {
  const files = new Map<string, Uint8Array>()
  const skipped: string[] = []
  let bytes = 0
  const walk = async (dir: string, depth: number): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const full = join(dir, entry.name)
      const path = relative(root, full).split('\\').join('/')
      if (entry.isDirectory()) {
        if (depth < 16) await walk(full, depth + 1)
        continue
      }
      // Symbolic links, sockets and devices are not files of the workspace.
      if (!entry.isFile()) {
        skipped.push(path)
        continue
      }
      const size = (await stat(full)).size
      if (files.size >= READ_BACK_FILES || bytes + size > READ_BACK_BYTES) {
        skipped.push(path)
        continue
      }
      bytes += size
      files.set(path, new Uint8Array(await readFile(full)))
    }
  }
  await walk(root, 0)
  return { files, skipped }
}

const sameBytes = (a: Uint8Array, b: Uint8Array) => a.byteLength === b.byteLength && Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength))

/** Runs `run` with the bwrap at `bwrap`; never rejects for the command's own failure. */
export async function runInShellSandbox(bwrap: string, run: ShellRun, signal?: AbortSignal): Promise<ShellOutcome> {
  const root = await mkdtemp(join(tmpdir(), 'or3-bash-'))
  try {
    for (const [path, bytes] of Object.entries(run.files)) {
      const target = join(root, path)
      await mkdir(dirname(target), { recursive: true })
      await writeFile(target, bytes)
    }
    const memoryKb = run.memoryMb * 1024
    const script = `ulimit -v ${memoryKb} 2>/dev/null; ulimit -f ${READ_BACK_BYTES / 1024} 2>/dev/null; ${run.command}`
    const args = [
      '--unshare-all', '--die-with-parent', '--new-session',
      ...systemMounts(),
      '--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp',
      '--bind', root, '/workspace', '--chdir', '/workspace',
      '--clearenv', '--setenv', 'PATH', '/usr/local/bin:/usr/bin:/bin', '--setenv', 'HOME', '/workspace', '--setenv', 'LANG', 'C.UTF-8',
      '--', '/bin/bash', '--noprofile', '--norc', '-c', script,
    ]
    const output = { stdout: '', stderr: '' }
    const cut = { stdout: false, stderr: false }
    const child = spawn(bwrap, args, { stdio: ['ignore', 'pipe', 'pipe'] })
    for (const stream of ['stdout', 'stderr'] as const) {
      child[stream].setEncoding('utf8')
      child[stream].on('data', (text: string) => {
        if (cut[stream]) return
        const room = run.outputChars - output[stream].length
        if (text.length > room) {
          output[stream] += text.slice(0, room) + `\n[… cut at ${run.outputChars} characters]`
          cut[stream] = true
        } else output[stream] += text
      })
    }
    let timedOut = false
    const kill = () => child.kill('SIGKILL')
    const timer = setTimeout(() => {
      timedOut = true
      kill()
    }, run.timeoutMs)
    signal?.addEventListener('abort', kill, { once: true })
    const exitCode = await new Promise<number | null>((resolve) => {
      child.once('error', () => resolve(null))
      child.once('close', code => resolve(code))
    })
    clearTimeout(timer)
    signal?.removeEventListener('abort', kill)
    const { files, skipped } = await readBack(root)
    const writes: Record<string, Uint8Array> = {}
    for (const [path, bytes] of files) {
      const before = run.files[path]
      if (!before || !sameBytes(before, bytes)) writes[path] = bytes
    }
    const deletes = Object.keys(run.files).filter(path => !files.has(path) && !skipped.includes(path))
    return { exitCode, ...output, timedOut, writes, deletes, skipped }
  } finally {
    await rm(root, { recursive: true, force: true })
  }
}
