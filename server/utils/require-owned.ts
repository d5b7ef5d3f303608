import type { H3Event } from 'h3'
import type { BackgroundJob } from '../../shared/types/job'
import type { ChatThread } from '../../shared/types/thread'
import type { SavedWorkflow } from '../../shared/types/workflow'
import type { WorkflowRun } from '../../shared/types/workflow-run'

const RECORD_ID = /^[\w-]{1,100}$/

/** The kinds of record a user owns, each with how to load it and what "not found" says. */
interface OwnedRecords {
  job: BackgroundJob
  thread: ChatThread
  workflow: SavedWorkflow
  workflowRun: WorkflowRun
}

const OWNED: { [K in keyof OwnedRecords]: { load: (id: string) => Promise<OwnedRecords[K] | null>, notFound: string } } = {
  job: { load: id => useBackgroundJobs().store.getJob(id), notFound: 'No such job. It may have expired, or it belongs to another account.' },
  thread: { load: id => useThreadStore().getThread(id), notFound: 'No such conversation. It may have been deleted, or it belongs to another account.' },
  workflow: { load: id => useWorkflows().saved.getWorkflow(id), notFound: 'No such workflow. It may have been deleted, or it belongs to another account.' },
  workflowRun: { load: id => useBackgroundJobs().workflowRuns.get(id), notFound: 'No such workflow run. It may be past the run history\'s retention, or it belongs to another account.' },
}

/**
 * The session user's job, conversation, saved workflow or workflow run `id`, or 404. Someone else's record
 * answers exactly like an unknown id, so ids cannot be probed. Every route on one record goes
 * through here.
 */
export async function requireOwned<K extends keyof OwnedRecords>(event: H3Event, kind: K, id: string | undefined): Promise<OwnedRecords[K]> {
  const user = await requireSessionUser(event)
  const { load, notFound } = OWNED[kind]
  const record = id && RECORD_ID.test(id) ? await load(id) : null
  if (!record || record.userId !== user.id) throw createError({ statusCode: 404, statusMessage: notFound })
  return record
}
