/** Workspace files in the app's sqlite file: one row per file, its bytes a blob. */
import { openSqliteDatabase } from '../sqlite/database'
import type { WorkspaceFile } from '../../../../shared/types/workspace'
import type { WorkspaceStore } from './workspace-store'

interface FileRow { path: string, size: number, updated_at: number }

/** Rows one delete takes at a time, so deleting a large workspace never holds the write lock long. */
const DELETE_BATCH = 200

const infoOf = (row: FileRow): WorkspaceFile => ({ path: row.path, size: row.size, updatedAt: row.updated_at })

export function createSqliteWorkspaceStore(options: { path: string }): WorkspaceStore {
  const db = openSqliteDatabase(options.path)
  const statements = {
    list: db.prepare<[string], FileRow>('SELECT path, size, updated_at FROM workspace_files WHERE workspace_id = ? ORDER BY path'),
    read: db.prepare<[string, string], FileRow & { bytes: Buffer }>('SELECT path, size, updated_at, bytes FROM workspace_files WHERE workspace_id = ? AND path = ?'),
    write: db.prepare(`INSERT INTO workspace_files (workspace_id, path, user_id, size, updated_at, bytes) VALUES (@workspaceId, @path, @userId, @size, @now, @bytes)
      ON CONFLICT (workspace_id, path) DO UPDATE SET size = excluded.size, updated_at = excluded.updated_at, bytes = excluded.bytes`),
    remove: db.prepare('DELETE FROM workspace_files WHERE workspace_id = ? AND path = ?'),
    removeWorkspace: db.prepare('DELETE FROM workspace_files WHERE rowid IN (SELECT rowid FROM workspace_files WHERE workspace_id = ? LIMIT ?)'),
    removeUser: db.prepare('DELETE FROM workspace_files WHERE rowid IN (SELECT rowid FROM workspace_files WHERE user_id = ? LIMIT ?)'),
    usage: db.prepare<[string], { bytes: number | null, files: number }>('SELECT SUM(size) AS bytes, COUNT(*) AS files FROM workspace_files WHERE user_id = ?'),
  }
  const deleteInBatches = async (statement: typeof statements.removeWorkspace, key: string) => {
    while (statement.run(key, DELETE_BATCH).changes === DELETE_BATCH) await new Promise(resolve => setImmediate(resolve))
  }
  return {
    async listFiles(workspaceId) {
      return statements.list.all(workspaceId).map(infoOf)
    },
    async readFile(workspaceId, path) {
      const row = statements.read.get(workspaceId, path)
      return row ? { ...infoOf(row), bytes: new Uint8Array(row.bytes) } : null
    },
    async writeFile({ workspaceId, userId, path, bytes, now = Date.now() }) {
      statements.write.run({ workspaceId, path, userId, size: bytes.byteLength, now, bytes: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) })
      return { path, size: bytes.byteLength, updatedAt: now }
    },
    async deleteFile(workspaceId, path) {
      return statements.remove.run(workspaceId, path).changes > 0
    },
    deleteWorkspace: workspaceId => deleteInBatches(statements.removeWorkspace, workspaceId),
    deleteUserFiles: userId => deleteInBatches(statements.removeUser, userId),
    async usage(userId) {
      const row = statements.usage.get(userId)!
      return { bytes: row.bytes ?? 0, files: row.files }
    },
    async close() {
      if (db.open) db.close()
    },
  }
}
