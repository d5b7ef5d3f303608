/**
 * A shell command run in a bubblewrap sandbox (`bwrap`, Debian's `bubblewrap`): new namespaces of
 * every kind (no network, its own process tree, no view of the server's processes), the system's
 * programs read-only, an empty /tmp, no environment but PATH and HOME, and the workspace's files
 * copied into a directory mounted at /workspace (its working directory). Its time is limited
 * (the whole sandbox is killed at the deadline), its output cut, and what it may hold counted:
 * - memory: its processes' resident memory (a watchdog reading /proc) and /tmp, a tmpfs sized a
 *   quarter of the cap, together within `memoryMb` (tmpfs pages are memory the processes do not show);
 * - storage: every file any program writes, in any language, at most `STORAGE_BYTES` (the file-size
 *   rlimit, set on the sandbox itself with prlimit, so it holds for Node and Python as for bash),
 *   and /workspace in all at most that much (the watchdog adds it up and stops the sandbox past it).
 * What it leaves in /workspace is read back and compared with what went in: new and changed
 * files and deleted ones are returned for the caller to apply through the workspace's checks.
 */
import { spawn } from 'node:child_process'
import { accessSync, constants, lstatSync, readdirSync, readFileSync } from 'node:fs'
import { mkdtemp, mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { delimiter, dirname, join, relative } from 'node:path'

export interface ShellRun {
  /** A bash command; or, with `program`, what is written to the program's stdin. */
  command: string
  /** Run this instead of bash: its argv inside the sandbox, and files of the host bound read-only where it expects them. */
  program?: { argv: string[], mounts: Array<{ from: string, to: string }> }
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
  /** Killed for holding more than `memoryMb`. */
  outOfMemory: boolean
  /** Stopped for writing more than `STORAGE_BYTES` into /workspace (or a file that large). */
  outOfStorage: boolean
  /** Files created or changed, by workspace path. */
  writes: Record<string, Uint8Array>
  deletes: string[]
  /** Files left in /workspace that were not read back (too many, too large). */
  skipped: string[]
}

/** Files and bytes read back from /workspace at most. */
const READ_BACK_FILES = 500
const READ_BACK_BYTES = 50 * 1024 * 1024
/** What the sandbox may write: any one file, and /workspace in all. */
export const STORAGE_BYTES = READ_BACK_BYTES
/** Entries of /workspace the storage watchdog counts at most before it stops the sandbox (a flood of empty files). */
const STORAGE_ENTRIES = 5_000
/** The share of the memory cap /tmp gets (a tmpfs: its pages are memory). */
const TMP_SHARE = 4

const MEMORY_CHECK_MS = 100

/** Bytes of the files under `root` and how many entries it has, counting at most `STORAGE_ENTRIES`. */
export async function storageUsed(root: string): Promise<{ bytes: number, entries: number }> {
  const used = { bytes: 0, entries: 0 }
  const walk = async (dir: string, depth: number): Promise<void> => {
    let entries
    try {
      entries = await readdir(dir, { withFileTypes: true })
    } catch {
      return
    }
    for (const entry of entries) {
      if (++used.entries > STORAGE_ENTRIES) return
      const full = join(dir, entry.name)
      if (entry.isDirectory()) {
        if (depth < 32) await walk(full, depth + 1)
      } else if (entry.isFile()) {
        try {
          used.bytes += (await stat(full)).size
        } catch {}
      }
    }
  }
  await walk(root, 0)
  return used
}

/** Resident memory (KiB) of process `pid` and all its descendants, from /proc (0 when it is gone). */
export function residentKbOfTree(pid: number, depth = 0): number {
  let total = 0
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8')
    total += Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? 0)
    if (depth < 32) {
      for (const task of readdirSync(`/proc/${pid}/task`)) {
        for (const child of readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(' ').filter(Boolean)) total += residentKbOfTree(Number(child), depth + 1)
      }
    }
  } catch {}
  return total
}

/** The program `name` on PATH, or undefined. */
function findProgram(name: string, path: string): string | undefined {
  for (const dir of path.split(delimiter).filter(Boolean)) {
    const candidate = join(dir, name)
    try {
      accessSync(candidate, constants.X_OK)
      return candidate
    } catch {}
  }
  return undefined
}

/** The bwrap program on PATH, or undefined. */
export function findBubblewrap(path = process.env.PATH ?? ''): string | undefined {
  return findProgram('bwrap', path)
}

/** util-linux's prlimit (always on Debian), which sets the sandbox's file-size limit and then runs bwrap. */
function prlimit(): string {
  const found = findProgram('prlimit', process.env.PATH ?? '') ?? findProgram('prlimit', '/usr/bin:/bin')
  if (!found) throw new Error('The sandbox needs prlimit (util-linux) to limit what it may write; install util-linux.')
  return found
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
    const tmpKb = Math.floor(memoryKb / TMP_SHARE)
    const script = `ulimit -v ${memoryKb} 2>/dev/null; ${run.command}`
    const argv = run.program?.argv ?? ['/bin/bash', '--noprofile', '--norc', '-c', script]
    const args = [
      '--unshare-all', '--die-with-parent', '--new-session',
      ...systemMounts(),
      '--proc', '/proc', '--dev', '/dev', '--size', String(tmpKb * 1024), '--tmpfs', '/tmp',
      ...(run.program?.mounts ?? []).flatMap(mount => ['--ro-bind', mount.from, mount.to]),
      '--bind', root, '/workspace', '--chdir', '/workspace',
      '--clearenv', '--setenv', 'PATH', '/usr/local/bin:/usr/bin:/bin', '--setenv', 'HOME', '/workspace', '--setenv', 'LANG', 'C.UTF-8',
      '--', ...argv,
    ]
    const output = { stdout: '', stderr: '' }
    const cut = { stdout: false, stderr: false }
    // The file-size limit is set on bwrap itself (prlimit execs it), so every program inside has it.
    const child = spawn(prlimit(), [`--fsize=${STORAGE_BYTES}`, '--', bwrap, ...args], { stdio: [run.program ? 'pipe' : 'ignore', 'pipe', 'pipe'] })
    if (run.program) {
      // A program that exits before reading all of it closes the pipe: not an error of ours.
      child.stdin!.on('error', () => {})
      child.stdin!.end(run.command)
    }
    for (const stream of ['stdout', 'stderr'] as const) {
      child[stream]!.setEncoding('utf8')
      child[stream]!.on('data', (text: string) => {
        if (cut[stream]) return
        const room = run.outputChars - output[stream].length
        if (text.length > room) {
          output[stream] += text.slice(0, room) + `\n[… cut at ${run.outputChars} characters]`
          cut[stream] = true
        } else output[stream] += text
      })
    }
    let timedOut = false
    let outOfMemory = false
    let outOfStorage = false
    let measuring = false
    const kill = () => child.kill('SIGKILL')
    const timer = setTimeout(() => {
      timedOut = true
      kill()
    }, run.timeoutMs)
    // Memory as the sandbox's processes hold it (resident), read from /proc: `ulimit -v` cannot
    // bound a program that reserves more address space than it uses (a WebAssembly runtime).
    const watchdog = setInterval(() => {
      if (child.pid !== undefined && residentKbOfTree(child.pid) > memoryKb - tmpKb) {
        outOfMemory = true
        kill()
      }
      if (measuring) return
      measuring = true
      void storageUsed(root).then((used) => {
        measuring = false
        if (used.bytes > STORAGE_BYTES || used.entries > STORAGE_ENTRIES) {
          outOfStorage = true
          kill()
        }
      })
    }, MEMORY_CHECK_MS)
    signal?.addEventListener('abort', kill, { once: true })
    const exitCode = await new Promise<number | null>((resolve) => {
      child.once('error', () => resolve(null))
      child.once('close', code => resolve(code))
    })
    clearTimeout(timer)
    clearInterval(watchdog)
    signal?.removeEventListener('abort', kill)
    // A file that reached the size limit was cut there (its writer got SIGXFSZ): the run ran out of room too.
    const used = await storageUsed(root)
    if (used.bytes >= STORAGE_BYTES || used.entries > STORAGE_ENTRIES) outOfStorage = true
    // Out of room, what it left is cut short: none of it is kept.
    if (outOfStorage) return { exitCode, ...output, timedOut, outOfMemory, outOfStorage, writes: {}, deletes: [], skipped: [] }
    const { files, skipped } = await readBack(root)
    const writes: Record<string, Uint8Array> = {}
    for (const [path, bytes] of files) {
      const before = run.files[path]
      if (!before || !sameBytes(before, bytes)) writes[path] = bytes
    }
    const deletes = Object.keys(run.files).filter(path => !files.has(path) && !skipped.includes(path))
    return { exitCode, ...output, timedOut, outOfMemory, outOfStorage, writes, deletes, skipped }
  } finally {
    await rm(root, { recursive: true, force: true })
  }
}
