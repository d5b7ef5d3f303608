/**
 * The one sink a run's events go to: each goes to the live hub, which numbers it, sends it to the
 * viewers and hands it to the job's writer (the hub's recorder), which stores it with the text and
 * tool calls it carries, so what the store keeps is what viewers got. Checkpoints resolve once the
 * store has them, for the steps that must not go on before (a tool with side effects).
 */
import type { JobStore } from '../../stores/jobs/job-store'
import type { ToolCallRecord } from '../../tools/run-tool-calls'
import { withToolExecution } from '../../stores/jobs/job-record'
import type { JobLiveHub, JobTerminal } from '../live-hub'
import { publicWorkflowState } from '../public-job'
import type { ThrottledJobWriter } from '../writer'
import type { ActiveToolCall, JobCheckpoint, JobSteer, PublicJob, ToolExecutionRecord, ToolRoundRecord } from '../../../../shared/types/job'
import type { WorkflowState } from '../../../../shared/types/workflow'

/** What a finished call leaves in the job's record: what the model got, not how it is shown. */
export function executionOf(record: ToolCallRecord): ToolExecutionRecord {
  return { id: record.id, name: record.name, arguments: record.arguments, result: record.result, executionTimeMs: record.executionTimeMs, ...(record.error === undefined ? {} : { error: record.error }) }
}

/** One job's event sink (see the module comment). */
export class JobRunEvents {
  private toolRounds: ToolRoundRecord[]
  private steers: JobSteer[]

  constructor(
    private readonly jobId: string,
    private readonly hub: JobLiveHub,
    private readonly writer: ThrottledJobWriter,
    private readonly store: JobStore,
    start: { toolRounds: ToolRoundRecord[], steers?: JobSteer[] },
  ) {
    this.toolRounds = start.toolRounds
    this.steers = start.steers ?? []
  }

  /**
   * Opens the job's live view for this run (`attempt`: its resume count), numbering events on from
   * what the store kept; every event viewers get from then on reaches the writer, and each write
   * first sends the text still in the hub's batch, so the store keeps exactly what viewers got.
   */
  open(job: PublicJob, run: { attempt: number, resumed: boolean, baseAttempt?: number }): void {
    this.writer.beforeFlush = () => this.hub.flush(this.jobId)
    this.hub.open(job, { ...run, record: (event, job) => this.writer.record(event, job) })
  }

  /** Streamed text (viewers get it batched; the store in throttled writes). */
  text(delta: { content?: string, reasoning?: string }, chunksReceived: number): void {
    this.hub.appendText(this.jobId, delta, chunksReceived)
  }

  /** A tool call appeared or changed state (written at once, with the text before it). */
  toolCall(call: ActiveToolCall): void {
    this.hub.updateToolCall(this.jobId, call)
  }

  /** A call of a chat job finished: what the model got is kept with its round. */
  toolExecution(round: number, record: ToolCallRecord): void {
    const execution = executionOf(record)
    this.toolRounds = withToolExecution(this.toolRounds, round, execution)
    this.hub.setToolRounds(this.jobId, this.toolRounds)
    void this.writer.enqueue(() => this.store.updateRunState(this.jobId, { toolExecution: { round, execution } }))
  }

  /** The model read a message the person sent the running answer: viewers see it, the job's record keeps it. */
  steer(steer: JobSteer): void {
    if (this.steers.some(kept => kept.id === steer.id)) return
    this.steers = [...this.steers, steer]
    this.hub.publish(this.jobId, { type: 'steer', steer })
    const steers = this.steers
    void this.writer.enqueue(() => this.store.updateRunState(this.jobId, { steers }))
  }

  /** Where a chat job resumes; `true` once stored. */
  checkpoint(checkpoint: JobCheckpoint): Promise<boolean> {
    return this.writer.checkpoint(() => this.store.updateRunState(this.jobId, { checkpoint }))
  }

  /** A workflow moved on: viewers see it (without checkpoints), the store keeps it whole; `true` once stored. */
  workflowState(state: WorkflowState): Promise<boolean> {
    this.showWorkflowState(state)
    return this.writer.checkpoint(() => this.store.updateRunState(this.jobId, { workflowState: state }))
  }

  /** Shows viewers a workflow state that is not kept (live step text between transitions). */
  showWorkflowState(state: WorkflowState): void {
    this.hub.publish(this.jobId, { type: 'workflow-state', workflowState: publicWorkflowState(state) })
  }

  /**
   * The run stopped to resume later: viewers here are let go (they reconnect to the resumed run);
   * with `keepText` (shutdown) what streamed is stored first, else (a lost lease) nothing more is written.
   */
  async interrupted(keepText: boolean): Promise<void> {
    if (keepText) await this.writer.flush()
    this.writer.dispose()
    this.hub.drop(this.jobId)
  }

  /** The run has nothing more to stream: every write it made is stored (before its terminal write). */
  async drained(): Promise<void> {
    await this.writer.flush()
    this.writer.dispose()
    this.hub.stopRecording(this.jobId)
  }

  /** The run ended as `terminal` (already stored); `finalText`: a last delta first. Returns how many viewers were told. */
  ended(terminal: JobTerminal, finalText?: { content: string, chunksReceived: number }): number {
    if (finalText) this.hub.appendText(this.jobId, { content: finalText.content }, finalText.chunksReceived)
    return this.hub.finish(this.jobId, terminal)
  }
}
