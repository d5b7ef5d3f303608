import type { WorkspaceListing } from '~~/shared/types/workspace'

/** The conversation's workspace files (what its tools wrote), and what its owner keeps in all workspaces. */
export default defineEventHandler(async (event): Promise<WorkspaceListing> => {
  const thread = await requireOwned(event, 'thread', getRouterParam(event, 'id'))
  return useToolSources().workspaces.listing(thread.id, thread.userId)
})
