import { useApiKey } from './useApiKey'
import type { SavedWorkflow, WorkflowCheck, WorkflowExample, WorkflowRunValue, WorkflowVersion, WorkflowVersionSummary } from '../../shared/types/workflow'
import type { WorkflowRun, WorkflowRunPage } from '../../shared/types/workflow-run'
import type { JobStatus } from '../../shared/types/job'

/** Which runs the runs page lists. */
export interface RunFilter {
  workflowId?: string
  statuses?: JobStatus[]
  /** Start times (ms): from, and before. */
  from?: number
  to?: number
}

/** Saved workflows, the shipped examples, validation, and runs. */
export function useWorkflows() {
  const apiKey = useApiKey()

  async function list(): Promise<SavedWorkflow[]> {
    return (await $fetch<{ workflows: SavedWorkflow[] }>('/api/workflows')).workflows
  }
  async function examples(): Promise<WorkflowExample[]> {
    return (await $fetch<{ examples: WorkflowExample[] }>('/api/workflows/examples')).examples
  }
  /** The server's checks of a definition (every problem with its node). */
  function validate(definition: unknown): Promise<WorkflowCheck> {
    return $fetch<WorkflowCheck>('/api/workflows/validate', { method: 'POST', body: { definition } })
  }
  function create(definition: unknown): Promise<SavedWorkflow> {
    return $fetch<SavedWorkflow>('/api/workflows', { method: 'POST', body: { definition } })
  }
  /** Saves the next version (`note`: what changed, if the person said). */
  function update(id: string, definition: unknown, note?: string): Promise<SavedWorkflow> {
    return $fetch<SavedWorkflow>(`/api/workflows/${id}`, { method: 'PUT', body: { definition, ...(note?.trim() ? { note: note.trim() } : {}) } })
  }
  /** A workflow's kept versions, newest first. */
  async function versions(id: string): Promise<WorkflowVersionSummary[]> {
    return (await $fetch<{ versions: WorkflowVersionSummary[] }>(`/api/workflows/${id}/versions`)).versions
  }
  function version(id: string, number: number): Promise<WorkflowVersion> {
    return $fetch<WorkflowVersion>(`/api/workflows/${id}/versions/${number}`)
  }
  /** Saves version `number` again as the next version. */
  function restore(id: string, number: number): Promise<SavedWorkflow> {
    return $fetch<SavedWorkflow>(`/api/workflows/${id}/versions/${number}/restore`, { method: 'POST' })
  }
  async function remove(id: string): Promise<void> {
    await $fetch(`/api/workflows/${id}`, { method: 'DELETE' })
  }
  /** Starts a run as a background job (with the user's own key, if any); returns its job id. `rerunOf`: the run it repeats ("Run again"). */
  async function run(id: string, given: { prompt?: string, inputs?: Record<string, WorkflowRunValue>, rerunOf?: string }): Promise<string> {
    return (await $fetch<{ jobId: string }>(`/api/workflows/${id}/run`, { method: 'POST', body: given, headers: apiKey.headers() })).jobId
  }
  /** One page of kept runs, newest first (`cursor`: the last page's `nextCursor`). */
  function runs(filter: RunFilter, cursor?: string, limit = 25): Promise<WorkflowRunPage> {
    const query = { limit, ...(filter.workflowId ? { workflowId: filter.workflowId } : {}), ...(filter.statuses?.length ? { status: filter.statuses.join(',') } : {}), ...(filter.from !== undefined ? { from: filter.from } : {}), ...(filter.to !== undefined ? { to: filter.to } : {}), ...(cursor ? { cursor } : {}) }
    return $fetch<WorkflowRunPage>('/api/workflows/runs', { query })
  }
  /** A kept run, with the run as its viewers last saw it. */
  function getRun(jobId: string): Promise<WorkflowRun> {
    return $fetch<WorkflowRun>(`/api/workflows/runs/${encodeURIComponent(jobId)}`)
  }
  async function deleteRun(jobId: string): Promise<void> {
    await $fetch(`/api/workflows/runs/${encodeURIComponent(jobId)}`, { method: 'DELETE' })
  }
  return { list, examples, validate, create, update, versions, version, restore, remove, run, runs, getRun, deleteRun }
}
