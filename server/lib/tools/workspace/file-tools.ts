/**
 * The workspace file tools of the tool-sources seed's core: `read`, `write`, `edit` (exact text
 * replacement), `ls`, `glob` and `grep`, each on the calling conversation's (or workflow run's)
 * workspace only. Results are bounded: a read returns at most `READ_CHARS`, a listing `LIST_MAX`
 * entries, grep `GREP_MAX` lines. `write` is safe to repeat after a crash (the same bytes again);
 * `edit` is not (a second replacement could apply twice), so a crash during one is reported to the
 * model as of unknown outcome, and it reads the file to see.
 */
import { z } from 'zod'
import { defineServerTool, type ServerToolModule } from '../define-tool'
import { workspaceIdFor, type Workspaces } from './workspaces'
import { workspacePath } from './paths'

const READ_CHARS = 100_000
const LIST_MAX = 500
const GREP_MAX = 100

const path = z.string().min(1).max(512)

export function workspaceFileTools(workspaces: Workspaces): ServerToolModule[] {
  return [
    defineServerTool({
      name: 'read',
      description: 'Read a text file from this conversation\'s workspace. Returns its text (long files: pass offset and limit, in lines).',
      parameters: z.object({
        path: path.describe('Path in the workspace, e.g. notes.md or src/app.js'),
        offset: z.number().int().min(1).max(10_000_000).optional().describe('First line to read (1-based).'),
        limit: z.number().int().min(1).max(100_000).optional().describe('Lines to read at most.'),
      }),
      runtime: 'server',
      idempotent: true,
      capabilities: ['workspace'],
      handler: async ({ path, offset, limit }, context) => {
        const { file, text } = await workspaces.readText(workspaceIdFor(context), path)
        const lines = text.split('\n')
        const from = (offset ?? 1) - 1
        const to = Math.min(lines.length, limit ? from + limit : lines.length)
        let content = lines.slice(from, to).join('\n')
        const cut = content.length > READ_CHARS
        if (cut) content = content.slice(0, READ_CHARS)
        return {
          path: file.path,
          size: file.size,
          totalLines: lines.length,
          ...(from > 0 || to < lines.length ? { lines: `${from + 1}-${to}` } : {}),
          content,
          ...(cut ? { note: `Cut at ${READ_CHARS.toLocaleString('en')} characters; read on with offset and limit.` } : {}),
        }
      },
    }),
    defineServerTool({
      name: 'write',
      description: 'Create or overwrite a text file in this conversation\'s workspace with the given content.',
      parameters: z.object({
        path: path.describe('Path in the workspace, e.g. notes.md or src/app.js'),
        content: z.string().describe('The whole new content of the file.'),
      }),
      runtime: 'server',
      idempotent: true,
      capabilities: ['workspace'],
      handler: async ({ path, content }, context) => {
        const file = await workspaces.write(workspaceIdFor(context), context.userId, path, content)
        return { path: file.path, size: file.size, written: true }
      },
    }),
    defineServerTool({
      name: 'edit',
      description: 'Edit a text file in the workspace by replacing an exact piece of its text (copied from read, spaces and line breaks included). The piece must occur once unless replace_all is true.',
      parameters: z.object({
        path: path.describe('Path in the workspace'),
        old_text: z.string().min(1).describe('The exact text to replace.'),
        new_text: z.string().describe('The text to put in its place.'),
        replace_all: z.boolean().optional().describe('Replace every occurrence instead of exactly one.'),
      }),
      runtime: 'server',
      capabilities: ['workspace'],
      handler: async ({ path, old_text, new_text, replace_all }, context) => {
        const { file, replaced } = await workspaces.edit(workspaceIdFor(context), context.userId, path, old_text, new_text, replace_all)
        return { path: file.path, size: file.size, replaced }
      },
    }),
    defineServerTool({
      name: 'ls',
      description: 'List the files and folders of this conversation\'s workspace (or of one folder in it), with sizes.',
      parameters: z.object({
        path: z.string().max(512).optional().describe('A folder in the workspace; omit for the top.'),
      }),
      runtime: 'server',
      idempotent: true,
      capabilities: ['workspace'],
      handler: async ({ path }, context) => {
        const folder = workspacePath(path ?? '', { allowTop: true })
        const files = await workspaces.list(workspaceIdFor(context), folder)
        const file = files.find(candidate => candidate.path === folder)
        if (file) return { folder: folder.split('/').slice(0, -1).join('/') || '/', entries: [{ name: folder.split('/').at(-1), type: 'file', size: file.size }] }
        const prefix = folder ? `${folder}/` : ''
        const entries = new Map<string, { name: string, type: 'file' | 'folder', size: number, files?: number }>()
        for (const file of files) {
          const rest = file.path.slice(prefix.length)
          const slash = rest.indexOf('/')
          if (slash === -1) {
            entries.set(rest, { name: rest, type: 'file', size: file.size })
          } else {
            const name = `${rest.slice(0, slash)}/`
            const entry = entries.get(name) ?? { name, type: 'folder' as const, size: 0, files: 0 }
            entry.size += file.size
            entry.files! += 1
            entries.set(name, entry)
          }
        }
        const listed = [...entries.values()]
        return { folder: prefix || '/', entries: listed.slice(0, LIST_MAX), ...(listed.length > LIST_MAX ? { more: listed.length - LIST_MAX } : {}), ...(files.length === 0 ? { note: 'The workspace is empty here.' } : {}) }
      },
    }),
    defineServerTool({
      name: 'glob',
      description: 'Find files in the workspace whose paths match a glob: *.md (any folder), src/**/*.ts, notes/{a,b}.txt.',
      parameters: z.object({ pattern: z.string().min(1).max(500).describe('The glob.') }),
      runtime: 'server',
      idempotent: true,
      capabilities: ['workspace'],
      handler: async ({ pattern }, context) => {
        const files = await workspaces.glob(workspaceIdFor(context), pattern)
        return { files: files.slice(0, LIST_MAX).map(file => ({ path: file.path, size: file.size })), ...(files.length > LIST_MAX ? { more: files.length - LIST_MAX } : {}) }
      },
    }),
    defineServerTool({
      name: 'grep',
      description: 'Search the text files of the workspace for lines matching a regular expression (RE2 syntax: no lookarounds or backreferences) or, with literal, the text as it is.',
      parameters: z.object({
        pattern: z.string().min(1).max(500).describe('The regular expression (or text with literal: true).'),
        path: z.string().max(512).optional().describe('A folder to search in; omit for the whole workspace.'),
        glob: z.string().max(500).optional().describe('Only files whose paths match this glob, e.g. *.md.'),
        ignore_case: z.boolean().optional(),
        literal: z.boolean().optional(),
      }),
      runtime: 'server',
      idempotent: true,
      capabilities: ['workspace'],
      handler: async ({ pattern, path, glob, ignore_case, literal }, context) => {
        const found = await workspaces.grep(workspaceIdFor(context), pattern, { folder: path, glob, ignoreCase: ignore_case, literal, maxMatches: GREP_MAX })
        return {
          matches: found.matches,
          ...(found.truncated ? { note: `Stopped at ${GREP_MAX} matching lines; narrow the pattern or the folder.` } : {}),
          ...(found.skipped.length > 0 ? { skipped: found.skipped.slice(0, 20), skippedNote: 'Not searched: past the 20 MiB one search reads.' } : {}),
        }
      },
    }),
  ]
}

