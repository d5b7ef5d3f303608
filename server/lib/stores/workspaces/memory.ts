/** Workspace files in this process's memory (tests, the memory store). */
import type { StoredWorkspaceFile, WorkspaceStore } from './workspace-store'

interface Kept extends StoredWorkspaceFile {
  userId: string
}

export function createMemoryWorkspaceStore(): WorkspaceStore {
  const workspaces = new Map<string, Map<string, Kept>>()
  const info = ({ path, size, updatedAt }: Kept) => ({ path, size, updatedAt })
  const everyFile = function* () {
    for (const files of workspaces.values()) yield* files.values()
  }
  return {
    async listFiles(workspaceId) {
      return [...workspaces.get(workspaceId)?.values() ?? []].map(info).sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
    },
    async readFile(workspaceId, path) {
      const file = workspaces.get(workspaceId)?.get(path)
      return file ? { ...info(file), bytes: file.bytes.slice() } : null
    },
    async writeFile({ workspaceId, userId, path, bytes, now = Date.now() }) {
      let files = workspaces.get(workspaceId)
      if (!files) workspaces.set(workspaceId, files = new Map())
      const file: Kept = { path, size: bytes.byteLength, updatedAt: now, bytes: bytes.slice(), userId }
      files.set(path, file)
      return info(file)
    },
    async deleteFile(workspaceId, path) {
      return workspaces.get(workspaceId)?.delete(path) ?? false
    },
    async deleteWorkspace(workspaceId) {
      workspaces.delete(workspaceId)
    },
    async deleteUserFiles(userId) {
      for (const files of workspaces.values()) {
        for (const [path, file] of files) if (file.userId === userId) files.delete(path)
      }
    },
    async usage(userId) {
      let bytes = 0
      let files = 0
      for (const file of everyFile()) {
        if (file.userId !== userId) continue
        bytes += file.size
        files++
      }
      return { bytes, files }
    },
    async close() {},
  }
}
