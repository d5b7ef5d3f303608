/**
 * Workspace files for the Convex workspace store. A file's bytes are written as chunks under a
 * fresh blob id first (`putChunk`), then `commit` points the file at them in one transaction, so a
 * reader sees the old version or the new whole. Replaced and deleted versions' chunks go in
 * scheduled passes (`dropChunks`) under the read limit; chunks of a write that never committed
 * (its instance died) go with their workspace. Server secret required.
 */
import { v } from 'convex/values'
import type { Doc } from './_generated/dataModel'
import { internalMutation, type MutationCtx, type QueryCtx } from './_generated/server'
import { internal } from './_generated/api'
import { serverMutation, serverQuery } from './lib/serverGuard'

/** Chunks deleted per pass: 16 of at most 512 KiB stay far below the 16 MiB a transaction may read. */
const CHUNKS_PER_PASS = 16
/** File records deleted per pass of a workspace or a person's files. */
const FILES_PER_PASS = 200
/** Files one person's usage sums at most (the server's quota is far below). */
const USAGE_SCAN = 20_000

const infoOf = (row: Doc<'workspace_files'>) => ({ path: row.path, size: row.size, updatedAt: row.updated_at })

async function findFile(ctx: Pick<QueryCtx, 'db'>, workspaceId: string, path: string): Promise<Doc<'workspace_files'> | null> {
  return ctx.db.query('workspace_files').withIndex('by_workspace_and_path', q => q.eq('workspace_id', workspaceId).eq('path', path)).unique()
}

export const list = serverQuery({
  args: { workspaceId: v.string() },
  handler: async (ctx, { workspaceId }) => {
    const rows = await ctx.db.query('workspace_files').withIndex('by_workspace_and_path', q => q.eq('workspace_id', workspaceId)).take(USAGE_SCAN)
    return rows.map(infoOf)
  },
})

export const getFile = serverQuery({
  args: { workspaceId: v.string(), path: v.string() },
  handler: async (ctx, { workspaceId, path }) => {
    const row = await findFile(ctx, workspaceId, path)
    return row ? { ...infoOf(row), blobId: row.blob_id, chunks: row.chunks } : null
  },
})

export const chunk = serverQuery({
  args: { blobId: v.string(), index: v.number() },
  handler: async (ctx, { blobId, index }) => {
    const row = await ctx.db.query('workspace_chunks').withIndex('by_blob_and_index', q => q.eq('blob_id', blobId).eq('index', index)).unique()
    return row?.bytes ?? null
  },
})

export const putChunk = serverMutation({
  args: { workspaceId: v.string(), blobId: v.string(), index: v.number(), bytes: v.bytes() },
  handler: async (ctx, { workspaceId, blobId, index, bytes }) => {
    await ctx.db.insert('workspace_chunks', { blob_id: blobId, workspace_id: workspaceId, index, bytes })
  },
})

/** Points `path` at the chunks of `blobId` (creating the file or replacing its bytes). */
export const commit = serverMutation({
  args: { workspaceId: v.string(), userId: v.string(), path: v.string(), size: v.number(), blobId: v.string(), chunks: v.number(), now: v.number() },
  handler: async (ctx, { workspaceId, userId, path, size, blobId, chunks, now }) => {
    const existing = await findFile(ctx, workspaceId, path)
    if (existing) {
      await ctx.db.patch(existing._id, { size, updated_at: now, blob_id: blobId, chunks })
      await ctx.scheduler.runAfter(0, internal.workspaces.dropChunks, { blobId: existing.blob_id })
    } else {
      await ctx.db.insert('workspace_files', { workspace_id: workspaceId, path, user_id: userId, size, updated_at: now, blob_id: blobId, chunks })
    }
    return { path, size, updatedAt: now }
  },
})

export const removeFile = serverMutation({
  args: { workspaceId: v.string(), path: v.string() },
  handler: async (ctx, { workspaceId, path }) => {
    const existing = await findFile(ctx, workspaceId, path)
    if (!existing) return false
    await ctx.db.delete(existing._id)
    await ctx.scheduler.runAfter(0, internal.workspaces.dropChunks, { blobId: existing.blob_id })
    return true
  },
})

/** One pass of a replaced or deleted version's chunks; schedules the next until none are left. */
export const dropChunks = internalMutation({
  args: { blobId: v.string() },
  handler: async (ctx, { blobId }) => {
    const rows = await ctx.db.query('workspace_chunks').withIndex('by_blob_and_index', q => q.eq('blob_id', blobId)).take(CHUNKS_PER_PASS)
    for (const row of rows) await ctx.db.delete(row._id)
    if (rows.length === CHUNKS_PER_PASS) await ctx.scheduler.runAfter(0, internal.workspaces.dropChunks, { blobId })
  },
})

/** Deletes a workspace: its file records at once (up to a pass), the rest and every chunk in scheduled passes. */
export const removeWorkspace = serverMutation({
  args: { workspaceId: v.string() },
  handler: async (ctx, { workspaceId }) => {
    await ctx.scheduler.runAfter(0, internal.workspaces.removeWorkspaceRest, { workspaceId })
    const rows = await ctx.db.query('workspace_files').withIndex('by_workspace_and_path', q => q.eq('workspace_id', workspaceId)).take(FILES_PER_PASS)
    for (const row of rows) await ctx.db.delete(row._id)
  },
})

export const removeWorkspaceRest = internalMutation({
  args: { workspaceId: v.string() },
  handler: async (ctx, { workspaceId }) => {
    const files = await ctx.db.query('workspace_files').withIndex('by_workspace_and_path', q => q.eq('workspace_id', workspaceId)).take(FILES_PER_PASS)
    for (const row of files) await ctx.db.delete(row._id)
    const chunks = await ctx.db.query('workspace_chunks').withIndex('by_workspace', q => q.eq('workspace_id', workspaceId)).take(CHUNKS_PER_PASS)
    for (const row of chunks) await ctx.db.delete(row._id)
    if (files.length === FILES_PER_PASS || chunks.length === CHUNKS_PER_PASS) await ctx.scheduler.runAfter(0, internal.workspaces.removeWorkspaceRest, { workspaceId })
  },
})

/** Deletes a person's files in every workspace (their account went): records in passes, each version's chunks after. */
export const removeUserFiles = serverMutation({
  args: { userId: v.string() },
  handler: async (ctx, { userId }) => {
    await removeUserFilesPass(ctx, userId)
  },
})

async function removeUserFilesPass(ctx: MutationCtx, userId: string): Promise<void> {
  const rows = await ctx.db.query('workspace_files').withIndex('by_user', q => q.eq('user_id', userId)).take(FILES_PER_PASS)
  for (const row of rows) {
    await ctx.db.delete(row._id)
    await ctx.scheduler.runAfter(0, internal.workspaces.dropChunks, { blobId: row.blob_id })
  }
  if (rows.length === FILES_PER_PASS) await ctx.scheduler.runAfter(0, internal.workspaces.removeUserFilesRest, { userId })
}

export const removeUserFilesRest = internalMutation({
  args: { userId: v.string() },
  handler: async (ctx, { userId }) => removeUserFilesPass(ctx, userId),
})

export const usage = serverQuery({
  args: { userId: v.string() },
  handler: async (ctx, { userId }) => {
    const rows = await ctx.db.query('workspace_files').withIndex('by_user', q => q.eq('user_id', userId)).take(USAGE_SCAN)
    return { bytes: rows.reduce((sum, row) => sum + row.size, 0), files: rows.length }
  },
})
