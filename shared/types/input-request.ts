/**
 * What a job waits for when it needs a person: a tool the browser runs, an approval, or a question
 * (an MCP server's elicitation, or a workflow's approval step). Stores (memory, sqlite, Convex)
 * persist these shapes; the job stream carries them (`input-request` events); the app answers
 * them with `POST /api/jobs/:id/input/:requestId`.
 */

/** The three kinds of wait. */
export type InputRequestKind = 'client-tool' | 'approval' | 'question'

/** `open` until answered, past its time (`expired`), or ended with its job (`cancelled`). */
export type InputRequestStatus = 'open' | 'answered' | 'expired' | 'cancelled'

/** A browser-run tool's outcome: a JSON result, or an error the model is told. */
export interface ClientToolAnswer { kind: 'client-tool', result?: unknown, error?: string }

/** Yes or no, with an optional reason the model is told. */
export interface ApprovalAnswer { kind: 'approval', approved: boolean, reason?: string }

/** An MCP elicitation's answer: `accept` with the form's content, `decline`, or `cancel`. */
export interface QuestionAnswer { kind: 'question', action: 'accept' | 'decline' | 'cancel', content?: Record<string, unknown> }

/** Any answer, tagged by the kind of request it answers. */
export type InputAnswer = ClientToolAnswer | ApprovalAnswer | QuestionAnswer

/** Text shown exactly, in a code view of its own. */
export interface InputCodeBlock {
  /** What it is, in the server's words ("Its code"). */
  label: string
  /** For the view (`javascript`, `json`). */
  language: string
  text: string
}

/** One thing a job waits for. */
export interface JobInputRequest {
  id: string
  jobId: string
  /** The job's owner: the only person who may answer. */
  userId: string
  kind: InputRequestKind
  /**
   * What makes the request unique within its job (the round and tool call, or the workflow node),
   * so that a run resumed after a restart finds the request it had opened instead of asking again.
   */
  key: string
  /** In words: what is asked ("Run send_email?", "Share your location?"). */
  title: string
  /** More detail (the MCP server's message, the workflow step's question). */
  message?: string
  /** The tool (client-tool and approval) and its arguments as the model sent them (JSON). */
  toolName?: string
  arguments?: string
  toolCallId?: string
  round?: number
  /** The workflow step that asks, and what came before it (shown with the question). */
  nodeId?: string
  preview?: string
  /** question (form): the JSON Schema of the answer's content; client-tool: of its result (optional). */
  schema?: Record<string, unknown>
  /** question (URL mode): the page to open. */
  url?: string
  /** Where it came from (`mcp:<server>` for an elicitation, `workflow` for an approval step). */
  origin?: string
  /**
   * What the person approves, each in a code view of its own (a tool's code, its arguments'
   * schema), with a label the server wrote: never inside `message`, where other text could push it out of view.
   */
  code?: InputCodeBlock[]
  /** Words a model wrote about what is asked (a tool's description): shown as its words, on one line, cut. */
  modelWords?: string
  status: InputRequestStatus
  createdAt: number
  /** Past this time an open request expires and the job goes on without an answer. */
  expiresAt: number
  /** client-tool: the tab that took it (so no other tab runs it), and when. */
  claimedBy?: string
  claimedAt?: number
  answeredAt?: number
  answer?: InputAnswer
  /** approval: when the job acted on the approval (so a restart never runs the tool twice). */
  consumedAt?: number
}

/** `POST /api/jobs/:id/input/:requestId/claim`: whether this tab may run the tool now. */
export interface InputClaim {
  claimed: boolean
  request: JobInputRequest
}
