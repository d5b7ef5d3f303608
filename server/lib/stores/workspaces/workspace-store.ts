/**
 * Storage of workspace files (memory, sqlite, Convex), one contract for each. A workspace is named
 * by its owner's thing (`thread:<id>`, `run:<jobId>`); each file belongs to one person, whose
 * files are counted together for their quota (the checks live in tools/workspace/workspaces.ts).
 */
import type { WorkspaceFile } from '../../../../shared/types/workspace'

/** A file with its bytes. */
export interface StoredWorkspaceFile extends WorkspaceFile {
  bytes: Uint8Array
}

export interface WorkspaceStore {
  /** The workspace's files, by path. */
  listFiles(workspaceId: string): Promise<WorkspaceFile[]>
  /** One file with its bytes, or null. */
  readFile(workspaceId: string, path: string): Promise<StoredWorkspaceFile | null>
  /** Creates or replaces a file, in one step: a reader sees the old bytes or the new, never a mix. */
  writeFile(input: { workspaceId: string, userId: string, path: string, bytes: Uint8Array, now?: number }): Promise<WorkspaceFile>
  /** Deletes one file; false when there was none. */
  deleteFile(workspaceId: string, path: string): Promise<boolean>
  /** Deletes every file of a workspace (its conversation or run was deleted). */
  deleteWorkspace(workspaceId: string): Promise<void>
  /** Deletes every file `userId` keeps (their account was deleted). */
  deleteUserFiles(userId: string): Promise<void>
  /** What `userId` keeps in all their workspaces. */
  usage(userId: string): Promise<{ bytes: number, files: number }>
  close(): Promise<void>
}
