/**
 * `bash`: a shell command in the bubblewrap sandbox (bash-sandbox.ts), with the conversation's
 * workspace as its working directory. Offered only where the operator turned it on and `bwrap`
 * is installed; otherwise it is listed as unavailable, saying how to enable it, and never offered
 * to a model. Not idempotent: a command may write files. Its changes reach the workspace only after
 * it ended, through the workspace's checks; a crash before that leaves the workspace as it was.
 */
import { z } from 'zod'
import { defineServerTool, type ServerToolModule } from '../define-tool'
import { changesReport, workspaceIdFor, type Workspaces } from '../workspace/workspaces'
import { runInShellSandbox, STORAGE_BYTES } from './bash-sandbox'

export interface BashSettings {
  enabled: boolean
  timeoutMs: number
  memoryMb: number
}

/** Bytes of workspace files copied into one run at most. */
const COPIED_BYTES = 20 * 1024 * 1024
const OUTPUT_CHARS = 20_000

/** Why `bash` cannot run here, or undefined when it can. */
export function bashUnavailable(settings: BashSettings, bwrap: string | undefined): string | undefined {
  if (!settings.enabled) return 'bash is off on this server: the operator turns it on with NUXT_TOOLS_BASH_ENABLED=true, with bubblewrap installed (apt install bubblewrap).'
  if (!bwrap) return 'bash is on, but bubblewrap (bwrap) is not installed on this server, and it never runs without that sandbox: install it (apt install bubblewrap) and restart.'
  return undefined
}

export function bashTool(workspaces: Workspaces, settings: BashSettings, bwrap: string | undefined): { tool: ServerToolModule, unavailable: () => string | undefined } {
  const unavailable = () => bashUnavailable(settings, bwrap)
  const tool = defineServerTool({
    name: 'bash',
    description: `Run a bash command in a sandbox: no network, the system's programs read-only, this conversation's workspace files in the working directory (changes are kept). Limits: ${Math.round(settings.timeoutMs / 1000)} s, ${settings.memoryMb} MiB.`,
    parameters: z.object({ command: z.string().min(1).max(20_000).describe('The command (bash).') }),
    runtime: 'server',
    capabilities: ['code_execution', 'workspace'],
    timeoutMs: settings.timeoutMs + 30_000,
    handler: async ({ command }, context) => {
      const reason = unavailable()
      if (reason) throw new Error(reason)
      const workspaceId = workspaceIdFor(context)
      const { files, left } = await workspaces.snapshot(workspaceId, COPIED_BYTES)
      const outcome = await runInShellSandbox(bwrap!, { command, files, timeoutMs: settings.timeoutMs, memoryMb: settings.memoryMb, outputChars: OUTPUT_CHARS }, context.signal)
      const applied = await workspaces.applyChanges(workspaceId, context.userId, outcome)
      return {
        exitCode: outcome.exitCode,
        ...(outcome.timedOut ? { timedOut: true, error: `stopped after ${Math.round(settings.timeoutMs / 1000)} s` } : {}),
        ...(outcome.outOfMemory ? { error: `stopped: it used more than ${settings.memoryMb} MiB` } : {}),
        ...(outcome.outOfStorage ? { error: `stopped: it wrote more than ${STORAGE_BYTES / 1024 / 1024} MiB of files (or one that large)` } : {}),
        ...(outcome.stdout ? { stdout: outcome.stdout } : {}),
        ...(outcome.stderr ? { stderr: outcome.stderr } : {}),
        ...changesReport(applied),
        ...(left.length > 0 ? { notCopied: left.slice(0, 20) } : {}),
        ...(outcome.skipped.length > 0 ? { notKept: outcome.skipped.slice(0, 20) } : {}),
      }
    },
  })
  return { tool, unavailable }
}
