/**
 * Messages a person lines up while an answer runs (`/api/threads/:id/queue`). Each starts, on the
 * server, when the answer before it ends well; "Send now" hands one to the running answer instead
 * (a steer), which the model reads at its next round boundary. A queue outlives the tab and a
 * restart, and each message is sent (or steered) exactly once.
 */

/** One message waiting in a conversation's queue. */
export interface QueuedMessage {
  /** Its id, which the user message takes when it is sent. */
  id: string
  threadId: string
  userId: string
  content: string
  /** The model it is asked of. */
  model: string
  /** Server tools to offer (absent: every enabled one). */
  tools?: string[]
  /** Its place in the queue (lowest first). */
  position: number
  createdAt: number
  updatedAt: number
  /** "Send now" while `steerJobId` ran: handed to that answer at its next round boundary. */
  steerJobId?: string
  /** A message to a workflow's running agent step (kept in its run's queue, `run:<jobId>`): the step's id. */
  steerNodeId?: string
  /** Why it did not start when its turn came (a budget, a cap): it waits for "Send now". */
  blocked?: string
  /**
   * Set once its send has begun: the ids its answer and job take (fixed before anything is stored,
   * so a send a crash cut short is finished with the same ones, never made twice).
   */
  sending?: { answerId: string, jobId: string }
}

/** Most messages one conversation's queue holds. */
export const MAX_QUEUED_MESSAGES = 20
