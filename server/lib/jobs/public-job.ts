/** The forms of a job the HTTP API shows: whole without secrets, or short for lists. */
import type { BackgroundJob, JobSummary, PublicJob } from '../../../shared/types/job'
import type { WorkflowState } from '../../../shared/types/workflow'
import { fileInTextPart } from '../attachments/attachments'

/** Characters of text (each of content and reasoning) `GET /api/jobs/:id` shows unless asked for more. */
export const JOB_TEXT_PAGE_CHARS = 200_000

/** Picks the fields the API may show. */
export function toPublicJob(job: BackgroundJob): PublicJob {
  const { request, checkpoint: _checkpoint, apiKeyCiphertext: _key, listedContentLength: _listed, ...rest } = job
  if (rest.workflowState) rest.workflowState = publicWorkflowState(rest.workflowState)
  if (request?.subagent) {
    const { parentJobId, description, depth } = request.subagent
    return { ...rest, subagent: { parentJobId, description, depth } }
  }
  if (!request?.workflow) return rest
  const { resumeState: _resumeState, ...workflow } = request.workflow
  return { ...rest, workflow }
}

/** A workflow run's state as viewers see it: without its agent steps' checkpoints (its loops' iterations' and child runs' too). */
export function publicWorkflowState(state: WorkflowState): WorkflowState {
  const { agentSteps: _steps, ...shown } = state
  const nested = Object.entries(shown.nodeStates).filter(([, node]) => node.child?.state || node.iterations?.some(iteration => iteration.state))
  if (nested.length === 0) return state.agentSteps ? shown : state
  const nodeStates = { ...shown.nodeStates }
  for (const [id, node] of nested) {
    nodeStates[id] = {
      ...node,
      ...(node.iterations ? { iterations: node.iterations.map(iteration => iteration.state ? { ...iteration, state: publicWorkflowState(iteration.state) } : iteration) } : {}),
      ...(node.child?.state ? { child: { ...node.child, state: publicWorkflowState(node.child.state) } } : {}),
    }
  }
  return { ...shown, nodeStates }
}

/** Characters of a job's prompt a list shows. */
const PROMPT_LINE_CHARS = 120

type AskedPart = { type?: unknown, text?: unknown }

/** What one part of a question is: words a person wrote, a file put in as text (with its name), or another file (an image). */
function readPart(part: AskedPart): { words: string } | { file: string | undefined } {
  if (typeof part.text !== 'string') return part.type === 'text' ? { words: '' } : { file: undefined }
  const file = fileInTextPart(part.text)
  return file ? { file: file.name } : { words: part.text }
}

/** Names the files a question was sent with, when it has no words: "report.csv", "2 files: a.png, b.txt". */
function filesLine(files: ReadonlyArray<string | undefined>): string | undefined {
  const named = files.filter((name): name is string => Boolean(name))
  if (files.length === 0) return undefined
  if (files.length === 1) return named[0] ?? 'An attached file'
  return named.length > 0 ? `${files.length} files: ${named.join(', ')}` : `${files.length} attached files`
}

/** The first non-empty line of what the job was asked (or the files it was sent, when it has no words), cut to `PROMPT_LINE_CHARS`. */
export function promptLine(job: BackgroundJob): string | undefined {
  const asked = job.request?.workflow?.prompt ?? job.request?.messages.findLast(message => message.role === 'user')?.content
  const parts = (Array.isArray(asked) ? asked as readonly AskedPart[] : []).map(readPart)
  const words = typeof asked === 'string' ? asked : parts.map(part => ('words' in part ? part.words : '')).join(' ')
  const line = words.slice(0, 2_000).split('\n').map(item => item.trim()).find(item => item !== '') ?? filesLine(parts.flatMap(part => ('file' in part ? [part.file] : [])))
  if (!line) return undefined
  return line.length > PROMPT_LINE_CHARS ? `${line.slice(0, PROMPT_LINE_CHARS - 1)}…` : line
}

/** A short form of a job for lists: without the large fields, with its prompt's first line. */
export function toJobSummary(job: BackgroundJob): JobSummary {
  const { content, reasoning: _reasoning, toolRounds, workflowState: _workflowState, workflow, ...rest } = toPublicJob(job)
  const prompt = promptLine(job)
  return { ...rest, contentLength: job.listedContentLength ?? content.length, toolRoundCount: toolRounds.length, ...(prompt ? { prompt } : {}), ...(workflow ? { workflowName: workflow.definition.name } : {}) }
}

/**
 * `job` with its content and reasoning cut to characters `[offset, offset + limit)`, and a
 * `textPage` saying so when anything was cut (the whole job otherwise).
 */
export function pageJobText(job: PublicJob, page: { offset?: number, limit?: number } = {}): PublicJob {
  const offset = page.offset ?? 0
  const limit = page.limit ?? JOB_TEXT_PAGE_CHARS
  const { content, reasoning } = job
  if (offset === 0 && content.length <= limit && reasoning.length <= limit) return job
  return {
    ...job,
    content: content.slice(offset, offset + limit),
    reasoning: reasoning.slice(offset, offset + limit),
    textPage: { offset, limit, contentLength: content.length, reasoningLength: reasoning.length },
  }
}
