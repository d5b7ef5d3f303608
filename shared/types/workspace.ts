/**
 * A workspace: the files one conversation (or one workflow run) and its tools share: `read`,
 * `write`, `edit`, `ls`, `glob`, `grep` and `run_code` work on it, never on the server's disk.
 * Kept in the store; paths are relative (`notes.md`, `src/app.js`), `/`-separated.
 */
export interface WorkspaceFile {
  /** Normalised path inside the workspace (no leading `/`, no `.` or `..`). */
  path: string
  size: number
  updatedAt: number
}

/** `GET /api/threads/:id/workspace`: the conversation's files and what its owner keeps in all workspaces. */
export interface WorkspaceListing {
  files: WorkspaceFile[]
  usage: WorkspaceUsage
}

/** What one person keeps in all their workspaces, beside the limits. */
export interface WorkspaceUsage {
  bytes: number
  files: number
  maxBytes: number
  maxFiles: number
}
