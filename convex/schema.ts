/**
 * Convex tables for jobs shared by several Nitro instances. High-churn and growing data lives in
 * its own tables (tool calls, checkpoints, notifications), never in unbounded arrays on the job.
 */
import { defineSchema, defineTable } from 'convex/server'
import { v } from 'convex/values'
import { knowledgeTables } from './lib/knowledgeTables'

/** A file a message names (see shared/types/attachment.ts). */
export const messageAttachment = v.object({
  id: v.string(),
  name: v.string(),
  mediaType: v.string(),
  kind: v.union(v.literal('image'), v.literal('text')),
  size: v.number(),
})

/** How a conversation asks the model (shared/types/personal.ts `ChatSettings`). */
export const chatSettings = v.object({
  systemPrompt: v.optional(v.string()),
  temperature: v.optional(v.number()),
  topP: v.optional(v.number()),
  maxTokens: v.optional(v.number()),
  reasoningEffort: v.optional(v.union(v.literal('minimal'), v.literal('low'), v.literal('medium'), v.literal('high'))),
  knowledgeBaseIds: v.optional(v.array(v.string())),
})

/** 👍 / 👎 on an answer (shared/types/personal.ts `MessageFeedback`). */
export const messageFeedback = v.object({ rating: v.union(v.literal('up'), v.literal('down')), reason: v.optional(v.string()), at: v.number() })

export const jobStatus = v.union(v.literal('streaming'), v.literal('complete'), v.literal('error'), v.literal('aborted'), v.literal('rejected'))

export const jobError = v.object({
  message: v.string(),
  kind: v.optional(v.string()),
  status: v.optional(v.number()),
  hint: v.optional(v.string()),
})

export const usage = v.object({
  promptTokens: v.number(),
  completionTokens: v.number(),
  totalTokens: v.number(),
  cachedTokens: v.number(),
  reasoningTokens: v.number(),
  cost: v.number(),
})

export default defineSchema({
  ...knowledgeTables,

  background_jobs: defineTable({
    /** The job's id as the app knows it (a UUID chosen by the server). */
    job_id: v.string(),
    user_id: v.string(),
    thread_id: v.string(),
    message_id: v.string(),
    model: v.string(),
    status: jobStatus,
    type: v.union(v.literal('chat'), v.literal('workflow')),
    /** Empty: the text lives in `job_text` chunks (jobs stored before chunks kept it here). */
    content: v.string(),
    reasoning: v.string(),
    /** Characters in the job's `job_text` chunks of each kind. */
    content_length: v.optional(v.number()),
    reasoning_length: v.optional(v.number()),
    /** Bumped when the text is rewritten rather than appended to (a viewer starts over). */
    text_generation: v.optional(v.number()),
    chunks_received: v.number(),
    started_at: v.number(),
    updated_at: v.number(),
    completed_at: v.optional(v.number()),
    error: v.optional(jobError),
    finish_reason: v.optional(v.string()),
    usage: v.optional(usage),
    resume_count: v.number(),
    /** The number of the last event of its run log kept (`job_events`); absent: none yet. */
    event_seq: v.optional(v.number()),
    /** An ended job whose run log is still kept (for viewers catching up); `compactLogs` drops it. */
    log_kept: v.optional(v.boolean()),
    /** The chat request (JSON) of jobs stored before `job_blobs` (newer jobs keep it there). */
    request: v.optional(v.string()),
    /** The user's API key, encrypted by the Nitro server; removed when the job ends. */
    api_key_ciphertext: v.optional(v.string()),
    /** Workflow progress (JSON: nodeStates, executionOrder, currentNodeId, failedNodeId). */
    workflow_state: v.optional(v.string()),
    /** The instance running the job and until when its lease holds. */
    lease_owner: v.optional(v.string()),
    lease_expires_at: v.optional(v.number()),
    /** Set by any instance to ask the running one to stop. */
    abort_requested_at: v.optional(v.number()),
    /** Messages the person sent it while it ran (JSON of JobSteer[]). */
    steers: v.optional(v.string()),
  })
    .index('by_job_id', ['job_id'])
    .index('by_thread_message', ['thread_id', 'message_id'])
    .index('by_user_status', ['user_id', 'status'])
    .index('by_user_and_started', ['user_id', 'started_at', 'job_id'])
    .index('by_status_and_completed', ['status', 'completed_at'])
    .index('by_log_kept_and_completed', ['log_kept', 'completed_at'])
    .index('by_status_and_lease', ['status', 'lease_expires_at']),

  /**
   * A workflow run's state in pieces (shared/workflow-state-parts.ts): each loop iteration's and
   * child run's state a row of its own, written only when it changed, so no document grows with
   * the run; `workflow_state` keeps the root that names them.
   */
  /** A running job's run log (convex/lib/jobEvents.ts): the events its viewers got, by number. */
  job_events: defineTable({
    job_id: v.string(),
    seq: v.number(),
    /** The run (the job's resume count then) that wrote it. */
    attempt: v.number(),
    type: v.string(),
    /** The event's JSON; absent when it is not kept (a snapshot, or one too large). */
    body: v.optional(v.string()),
    /** Replaced by a later workflow state of the same write. */
    superseded: v.optional(v.boolean()),
  }).index('by_job_and_seq', ['job_id', 'seq']),

  job_workflow_state_parts: defineTable({
    job_id: v.string(),
    path: v.string(),
    body: v.string(),
  })
    .index('by_job_and_path', ['job_id', 'path']),

  /** One row per tool call of a job: its live state and, once executed, its full result. */
  job_tool_calls: defineTable({
    job_id: v.string(),
    round: v.number(),
    call_id: v.string(),
    /** Position in the job's activeToolCalls (call order). */
    position: v.number(),
    /** Part of the job's current activeToolCalls list. */
    active: v.boolean(),
    name: v.string(),
    arguments: v.string(),
    status: v.union(v.literal('pending'), v.literal('running'), v.literal('completed'), v.literal('error')),
    timed_out: v.optional(v.boolean()),
    started_at: v.optional(v.number()),
    finished_at: v.optional(v.number()),
    execution_time_ms: v.optional(v.number()),
    display_result: v.optional(v.string()),
    error: v.optional(v.string()),
    /** Set once executed: the full text the model got (toolRounds). */
    executed: v.optional(v.object({
      result: v.string(),
      error: v.optional(v.string()),
      execution_time_ms: v.number(),
      sequence: v.number(),
    })),
  })
    .index('by_job_and_position', ['job_id', 'position'])
    .index('by_job_and_call', ['job_id', 'round', 'call_id']),

  /** A job's streamed text in chunks (convex/lib/jobText.ts), so no document nears Convex's 1 MiB. */
  job_text: defineTable({
    job_id: v.string(),
    kind: v.union(v.literal('content'), v.literal('reasoning')),
    /** The character offset this chunk starts at. */
    start: v.number(),
    text: v.string(),
  }).index('by_job_kind_start', ['job_id', 'kind', 'start']),

  /** The rest of a long message field past what its document keeps. */
  thread_message_parts: defineTable({
    message_id: v.string(),
    field: v.union(v.literal('content'), v.literal('reasoning'), v.literal('tool_calls')),
    index: v.number(),
    text: v.string(),
  }).index('by_message_field_index', ['message_id', 'field', 'index']),

  /** A running job's slot, counted against caps across instances (convex/lib/jobSlots.ts). */
  job_slots: defineTable({
    job_id: v.string(),
    user_id: v.string(),
    /** Waiting for a person: not counted as running. */
    parked: v.boolean(),
    expires_at: v.number(),
  }).index('by_job_id', ['job_id']).index('by_user_and_expires', ['user_id', 'expires_at']).index('by_expires', ['expires_at']),

  /** How many people watch a job from an instance that does not run it, until `expires_at`. */
  job_viewers: defineTable({
    job_id: v.string(),
    instance: v.string(),
    count: v.number(),
    expires_at: v.number(),
  }).index('by_job_and_instance', ['job_id', 'instance']).index('by_expires', ['expires_at']),

  /** A job's request and checkpoint (JSON) in parts (convex/lib/jobBlobs.ts), so neither nears 1 MiB in one document. */
  job_blobs: defineTable({
    job_id: v.string(),
    kind: v.union(v.literal('request'), v.literal('checkpoint')),
    index: v.number(),
    text: v.string(),
  }).index('by_job_kind_index', ['job_id', 'kind', 'index']),

  /** Where a job resumed (JSON) before checkpoints were kept in `job_blobs`; read, and removed on the next write. */
  job_checkpoints: defineTable({
    job_id: v.string(),
    checkpoint: v.string(),
  }).index('by_job_id', ['job_id']),

  threads: defineTable({
    thread_id: v.string(),
    user_id: v.string(),
    title: v.string(),
    created_at: v.number(),
    updated_at: v.number(),
    /** The last message of the branch on view, when the user picked a version. */
    active_message_id: v.optional(v.string()),
    /** The title with case and accents folded, for the search index (absent on threads stored before search). */
    search_title: v.optional(v.string()),
    /** Listed first (absent: not pinned). */
    pinned: v.optional(v.boolean()),
    folder_id: v.optional(v.string()),
    settings: v.optional(chatSettings),
  })
    .index('by_thread_id', ['thread_id'])
    .index('by_user_and_updated', ['user_id', 'updated_at'])
    .index('by_user_pinned_and_updated', ['user_id', 'pinned', 'updated_at'])
    .index('by_user_folder_and_updated', ['user_id', 'folder_id', 'updated_at'])
    .searchIndex('search_title', { searchField: 'search_title', filterFields: ['user_id'] }),

  thread_messages: defineTable({
    message_id: v.string(),
    thread_id: v.string(),
    role: v.union(v.literal('user'), v.literal('assistant')),
    content: v.string(),
    created_at: v.number(),
    /** The message this one follows (absent on messages stored before versions). */
    parent_id: v.optional(v.string()),
    attachments: v.optional(v.array(messageAttachment)),
    model: v.optional(v.string()),
    job_id: v.optional(v.string()),
    status: v.optional(jobStatus),
    reasoning: v.optional(v.string()),
    /** The answer's tool calls (JSON), written once when its job ends. */
    tool_calls: v.optional(v.string()),
    error: v.optional(jobError),
    finish_reason: v.optional(v.string()),
    /** An answer's tokens and cost, written with its outcome when its job ends. */
    usage: v.optional(usage),
    /** The thread's owner and the text with case and accents folded, for searching a person's messages (absent on messages stored before search). */
    user_id: v.optional(v.string()),
    search_text: v.optional(v.string()),
    /** The owner's 👍 / 👎, and when (indexed for the admin's report). */
    feedback: v.optional(messageFeedback),
    feedback_at: v.optional(v.number()),
    /** What the person sent the answer while it ran (JSON of JobSteer[]), written with its outcome. */
    steers: v.optional(v.string()),
    /** Parts in `thread_message_parts` after the first 50,000 characters of the text, reasoning and tool calls (convex/lib/messageParts.ts). */
    content_parts: v.optional(v.number()),
    reasoning_parts: v.optional(v.number()),
    tool_calls_parts: v.optional(v.number()),
  })
    .index('by_message_id', ['message_id'])
    .index('by_feedback_at', ['feedback_at'])
    .index('by_thread_and_created', ['thread_id', 'created_at'])
    .searchIndex('search_content', { searchField: 'search_text', filterFields: ['user_id'] }),

  /** Messages lined up in a conversation while an answer runs (server/lib/stores/threads/message-queue-store.ts); gone with it. */
  thread_queue: defineTable({
    item_id: v.string(),
    thread_id: v.string(),
    user_id: v.string(),
    position: v.number(),
    content: v.string(),
    model: v.string(),
    tools: v.optional(v.array(v.string())),
    api_key_ciphertext: v.optional(v.string()),
    created_at: v.number(),
    updated_at: v.number(),
    steer_job_id: v.optional(v.string()),
    steer_node_id: v.optional(v.string()),
    blocked: v.optional(v.string()),
    sending: v.optional(v.object({ answerId: v.string(), jobId: v.string() })),
  })
    .index('by_item_id', ['item_id'])
    .index('by_thread_and_position', ['thread_id', 'position']),

  /** Files sent with messages; their bytes are in `thread_attachment_chunks` (a document holds at most 1 MiB). */
  thread_attachments: defineTable({
    attachment_id: v.string(),
    thread_id: v.string(),
    user_id: v.string(),
    name: v.string(),
    media_type: v.string(),
    kind: v.union(v.literal('image'), v.literal('text')),
    size: v.number(),
    created_at: v.number(),
    /** How many chunks hold the bytes (all written before this row). */
    chunks: v.number(),
  })
    .index('by_attachment_id', ['attachment_id'])
    .index('by_thread', ['thread_id'])
    .index('by_user', ['user_id']),

  thread_attachment_chunks: defineTable({
    attachment_id: v.string(),
    index: v.number(),
    bytes: v.bytes(),
  }).index('by_attachment_and_index', ['attachment_id', 'index']),

  /** Workspace files (a conversation's or a workflow run's); their bytes are in `workspace_chunks` under `blob_id`. */
  workspace_files: defineTable({
    workspace_id: v.string(),
    path: v.string(),
    user_id: v.string(),
    size: v.number(),
    updated_at: v.number(),
    /** The chunks holding this version's bytes (a new version writes new chunks, then points here). */
    blob_id: v.string(),
    chunks: v.number(),
  })
    .index('by_workspace_and_path', ['workspace_id', 'path'])
    .index('by_user', ['user_id']),

  workspace_chunks: defineTable({
    blob_id: v.string(),
    workspace_id: v.string(),
    index: v.number(),
    bytes: v.bytes(),
  })
    .index('by_blob_and_index', ['blob_id', 'index'])
    .index('by_workspace', ['workspace_id']),

  /** Saved workflow definitions (JSON), per user. */
  workflows: defineTable({
    workflow_id: v.string(),
    user_id: v.string(),
    name: v.string(),
    definition: v.string(),
    created_at: v.number(),
    updated_at: v.number(),
    /** The current version's number; absent on workflows saved before versions (their version 1). */
    version: v.optional(v.number()),
  })
    .index('by_workflow_id', ['workflow_id'])
    .index('by_user_and_updated', ['user_id', 'updated_at']),

  /** Every saved version of a workflow (the newest 100 are kept). */
  workflow_versions: defineTable({
    workflow_id: v.string(),
    version: v.number(),
    name: v.string(),
    definition: v.string(),
    created_at: v.number(),
    created_by: v.string(),
    note: v.optional(v.string()),
  }).index('by_workflow_and_version', ['workflow_id', 'version']),

  /** Kept workflow runs (server/lib/stores/workflows/run-store.ts): columns to list by, the summary and the run as JSON. */
  workflow_runs: defineTable({
    job_id: v.string(),
    user_id: v.string(),
    workflow_id: v.string(),
    status: v.string(),
    started_at: v.number(),
    finished_at: v.optional(v.number()),
    summary: v.string(),
    job: v.string(),
    /** Bytes it takes (summary and run); absent on runs kept before sizes (counted as 0). */
    size: v.optional(v.number()),
  })
    .index('by_job_id', ['job_id'])
    .index('by_user_and_started', ['user_id', 'started_at', 'job_id'])
    .index('by_workflow_and_started', ['workflow_id', 'started_at', 'job_id'])
    .index('by_status_and_started', ['status', 'started_at'])
    .index('by_finished', ['finished_at'])
    .index('by_user_and_finished', ['user_id', 'finished_at'])
    .index('by_workflow_and_finished', ['workflow_id', 'finished_at']),

  /** What the kept runs of each account (`user:<id>`) and workflow (`workflow:<id>`) take, in bytes: kept with every write of a run. */
  workflow_run_bytes: defineTable({
    owner: v.string(),
    bytes: v.number(),
  }).index('by_owner', ['owner']),

  accounts: defineTable({
    account_id: v.string(),
    name: v.string(),
    /** The name trimmed and lower-cased: names are unique without regard to case. */
    name_key: v.string(),
    password_hash: v.string(),
    role: v.union(v.literal('admin'), v.literal('user')),
    disabled: v.boolean(),
    session_version: v.number(),
    created_at: v.number(),
  })
    .index('by_account_id', ['account_id'])
    .index('by_name_key', ['name_key'])
    .index('by_created', ['created_at']),

  api_tokens: defineTable({
    token_id: v.string(),
    user_id: v.string(),
    name: v.string(),
    prefix: v.string(),
    /** SHA-256 of the token; the token itself is never stored. */
    token_hash: v.string(),
    created_at: v.number(),
    last_used_at: v.union(v.number(), v.null()),
  })
    .index('by_token_id', ['token_id'])
    .index('by_token_hash', ['token_hash'])
    .index('by_user', ['user_id', 'created_at']),

  /** Which identity provider's person (OpenID Connect `sub`) signs in to which account; removed with the account. */
  account_identities: defineTable({
    provider: v.string(),
    subject: v.string(),
    account_id: v.string(),
    email: v.union(v.string(), v.null()),
    created_at: v.number(),
    last_sign_in_at: v.number(),
  })
    .index('by_identity', ['provider', 'subject'])
    .index('by_account', ['account_id', 'created_at']),

  invites: defineTable({
    code_hash: v.string(),
    created_by: v.string(),
    created_at: v.number(),
    expires_at: v.number(),
    used_at: v.union(v.number(), v.null()),
  }).index('by_code_hash', ['code_hash']),

  settings: defineTable({
    key: v.string(),
    value: v.string(),
  }).index('by_key', ['key']),

  /** Short locks shared by every instance (one OAuth refresh at a time per person and server). */
  locks: defineTable({
    key: v.string(),
    owner: v.string(),
    expires_at: v.number(),
  }).index('by_key', ['key']),

  /**
   * Rate-limit counters shared by every instance (rate-limiter-flexible's store, server/lib/stores/
   * rate-limits/convex.ts): points used under a key until `expire` (ms since the epoch; null: never).
   */
  rate_limits: defineTable({
    key: v.string(),
    points: v.number(),
    expire: v.union(v.number(), v.null()),
  }).index('by_key', ['key']).index('by_expire', ['expire']),

  /** Tokens and credits each principal used per UTC day, for the daily budgets. */
  usage_daily: defineTable({
    user_id: v.string(),
    day: v.string(),
    tokens: v.number(),
    cost: v.number(),
    jobs: v.number(),
  }).index('by_user_day', ['user_id', 'day']).index('by_day_tokens', ['day', 'tokens']),

  /** Each job's models' shares per principal and UTC day, for the usage pages (usage_daily stays the budgets' count). */
  usage_by_model: defineTable({
    user_id: v.string(),
    day: v.string(),
    model: v.string(),
    tokens: v.number(),
    cost: v.number(),
    jobs: v.number(),
  }).index('by_user_day_model', ['user_id', 'day', 'model']).index('by_day', ['day']),

  job_notifications: defineTable({
    user_id: v.string(),
    job_id: v.string(),
    thread_id: v.string(),
    kind: v.union(v.literal('job-complete'), v.literal('job-error'), v.literal('job-aborted'), v.literal('input-needed')),
    title: v.string(),
    body: v.string(),
    created_at: v.number(),
    read_at: v.optional(v.number()),
  })
    .index('by_user_and_created', ['user_id', 'created_at'])
    .index('by_job_id', ['job_id']),

  /** What jobs wait on their users for (shared/types/input-request.ts); the request as JSON in `body`. */
  job_input_requests: defineTable({
    request_id: v.string(),
    job_id: v.string(),
    user_id: v.string(),
    key: v.string(),
    status: v.union(v.literal('open'), v.literal('answered'), v.literal('expired'), v.literal('cancelled')),
    created_at: v.number(),
    body: v.string(),
  })
    .index('by_request_id', ['request_id'])
    .index('by_job_and_key', ['job_id', 'key'])
    .index('by_job_and_created', ['job_id', 'created_at'])
    .index('by_user_status_created', ['user_id', 'status', 'created_at']),
})
