import type { H3Event } from 'h3'
import type { BackgroundJob } from '../../shared/types/job'
import type { ChatThread } from '../../shared/types/thread'
import type { SavedWorkflow } from '../../shared/types/workflow'

const RECORD_ID = /^[\w-]{1,100}$/

/**
 * The record `id` if the session user owns it. Someone else's record answers 404 exactly like an
 * unknown id, so ids cannot be probed.
 */
async function requireOwned<T extends { userId: string }>(event: H3Event, id: string | undefined, load: (id: string) => Promise<T | null>, notFound: string): Promise<T> {
  const user = await requireSessionUser(event)
  const record = id && RECORD_ID.test(id) ? await load(id) : null
  if (!record || record.userId !== user.id) throw createError({ statusCode: 404, statusMessage: notFound })
  return record
}

/** The session user's job `jobId`, or 404. Every job route goes through here. */
export function requireOwnedJob(event: H3Event, jobId: string | undefined): Promise<BackgroundJob> {
  return requireOwned(event, jobId, id => useBackgroundJobs().store.getJob(id), 'No such job. It may have expired, or it belongs to another session.')
}

/** The session user's conversation `threadId`, or 404. */
export function requireOwnedThread(event: H3Event, threadId: string | undefined): Promise<ChatThread> {
  return requireOwned(event, threadId, id => useThreadStore().getThread(id), 'No such conversation. It may have been deleted, or it belongs to another session.')
}

/** The session user's saved workflow `workflowId`, or 404. */
export function requireOwnedWorkflow(event: H3Event, workflowId: string | undefined): Promise<SavedWorkflow> {
  return requireOwned(event, workflowId, id => useWorkflowStore().getWorkflow(id), 'No such workflow. It may have been deleted, or it belongs to another session.')
}
