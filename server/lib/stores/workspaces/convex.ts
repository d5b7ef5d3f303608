/** Workspace files on Convex (see convex/workspaces.ts): bytes in chunks of 512 KiB, committed in one step. */
import { api } from '../../../../convex/_generated/api'
import type { ConvexFunctionClient } from '../jobs/convex'
import type { WorkspaceStore } from './workspace-store'

/** Bytes per stored chunk (a Convex document holds at most 1 MiB). */
const CHUNK_BYTES = 512 * 1024

export function createConvexWorkspaceStore(options: { client: ConvexFunctionClient, secret: string }): WorkspaceStore {
  const { client, secret } = options
  return {
    async listFiles(workspaceId) {
      return client.query(api.workspaces.list, { secret, workspaceId })
    },
    async readFile(workspaceId, path) {
      // A file replaced while it was read loses its old chunks: read the new version whole instead.
      for (let attempt = 0; attempt < 3; attempt++) {
        const found = await client.query(api.workspaces.getFile, { secret, workspaceId, path })
        if (!found) return null
        const bytes = new Uint8Array(found.size)
        let offset = 0
        let whole = true
        for (let index = 0; index < found.chunks && whole; index++) {
          const piece = await client.query(api.workspaces.chunk, { secret, blobId: found.blobId, index })
          if (!piece) whole = false
          else {
            bytes.set(new Uint8Array(piece), offset)
            offset += piece.byteLength
          }
        }
        const { blobId: _blob, chunks: _chunks, ...info } = found
        if (whole) return { ...info, bytes }
      }
      throw new Error(`The workspace file ${path} kept changing while it was read; try again.`)
    },
    async writeFile({ workspaceId, userId, path, bytes, now = Date.now() }) {
      const blobId = crypto.randomUUID()
      let chunks = 0
      for (let offset = 0; offset < bytes.byteLength; offset += CHUNK_BYTES) {
        // A copy of just these bytes: `bytes` may be a view of a larger buffer (a Node Buffer from its pool), whose `.buffer` is all of it.
        const piece = bytes.buffer.slice(bytes.byteOffset + offset, bytes.byteOffset + Math.min(offset + CHUNK_BYTES, bytes.byteLength))
        await client.mutation(api.workspaces.putChunk, { secret, workspaceId, blobId, index: chunks++, bytes: piece as ArrayBuffer })
      }
      return client.mutation(api.workspaces.commit, { secret, workspaceId, userId, path, size: bytes.byteLength, blobId, chunks, now })
    },
    async deleteFile(workspaceId, path) {
      return client.mutation(api.workspaces.removeFile, { secret, workspaceId, path })
    },
    async deleteWorkspace(workspaceId) {
      await client.mutation(api.workspaces.removeWorkspace, { secret, workspaceId })
    },
    async deleteUserFiles(userId) {
      await client.mutation(api.workspaces.removeUserFiles, { secret, userId })
    },
    async usage(userId) {
      return client.query(api.workspaces.usage, { secret, userId })
    },
    async close() {},
  }
}
