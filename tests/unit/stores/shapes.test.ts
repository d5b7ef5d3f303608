/**
 * One shape, one place: the records of shared/types are what every store keeps. Each shape's
 * fields are listed here once, checked by the compiler against the type (a field added to the type
 * and not here fails `npm test`'s typecheck), and compared with the Convex validators and the
 * SQLite columns (a field added to a store and not the type, or the other way round, fails here).
 */
import type { StoredQueuedMessage } from '../../../server/lib/stores/threads/message-queue-store'
import type Database from 'better-sqlite3'
import { afterAll, describe, expect, it } from 'vitest'
import schema, { chatSettings, jobError, jobStatus, messageAttachment, messageFeedback, usage } from '../../../convex/schema'
import type { ChatSettings, MessageFeedback } from '../../../shared/types/personal'
import { chatSettingsSchema } from '../../../shared/schemas/personal'
import { openSqliteDatabase } from '../../../server/lib/stores/sqlite/database'
import type { Usage } from '../../../shared/types/chat'
import type { StoredJobEvent } from '../../../shared/types/job-events'
import type { ActiveToolCall, BackgroundJob, JobError, JobNotification, JobStatus, ToolExecutionRecord } from '../../../shared/types/job'
import type { ChatThread, ThreadMessage } from '../../../shared/types/thread'
import type { MessageAttachment } from '../../../shared/types/attachment'
import type { SavedWorkflow, WorkflowVersion } from '../../../shared/types/workflow'
import type { DailyUsage, ModelUsage } from '../../../shared/types/limits'

/** Every field of `T`, each named once: the compiler refuses a missing or unknown one. */
function fieldsOf<T>(fields: { [K in keyof Required<T>]: true }): string[] {
  return Object.keys(fields)
}

/** Every member of a string union, each named once. */
function membersOf<T extends string>(members: { [K in T]: true }): string[] {
  return Object.keys(members).sort()
}

const snake = (name: string) => name.replace(/[A-Z]/g, letter => `_${letter.toLowerCase()}`)

/** A record's fields as a store names them: snake_case, with some renamed, moved elsewhere or added. */
function stored(fields: string[], options: { rename?: Record<string, string>, elsewhere?: string[], storageOnly?: string[] } = {}): string[] {
  return [
    ...fields.filter(field => !options.elsewhere?.includes(field)).map(field => options.rename?.[field] ?? snake(field)),
    ...(options.storageOnly ?? []),
  ].sort()
}

const convexFields = (table: keyof typeof schema.tables) => Object.keys(schema.tables[table].validator.fields).sort()
const literalsOf = (validator: { members: Array<{ value: unknown }> }) => validator.members.map(member => String(member.value)).sort()

const db: Database.Database = openSqliteDatabase(':memory:')
afterAll(() => db.close())
const sqliteColumns = (table: string) => (db.pragma(`table_info(${table})`) as Array<{ name: string }>).map(column => column.name).sort()
/** The values a CHECK (`column` IN (…)) constraint allows. */
function sqliteCheck(table: string, column: string): string[] {
  const { sql } = db.prepare('SELECT sql FROM sqlite_master WHERE name = ?').get(table) as { sql: string }
  const list = sql.match(new RegExp(`CHECK \\(${column} IN \\(([^)]*)\\)\\)`))![1]!
  return list.split(',').map(item => item.trim().replace(/^'|'$/g, '')).sort()
}

const job = fieldsOf<BackgroundJob>({
  id: true, userId: true, threadId: true, messageId: true, type: true, model: true, status: true, content: true,
  reasoning: true, chunksReceived: true, activeToolCalls: true, toolRounds: true, workflowState: true, usage: true,
  error: true, finishReason: true, startedAt: true, updatedAt: true, completedAt: true, resumeCount: true,
  request: true, checkpoint: true, apiKeyCiphertext: true, listedContentLength: true, eventSeq: true, steers: true,
})
const jobStatuses = membersOf<JobStatus>({ streaming: true, complete: true, error: true, aborted: true, rejected: true })
const jobTypes = membersOf<BackgroundJob['type']>({ chat: true, workflow: true })
const toolCall = fieldsOf<ActiveToolCall>({
  id: true, name: true, arguments: true, round: true, status: true, timedOut: true, startedAt: true, finishedAt: true,
  executionTimeMs: true, result: true, error: true,
})
const execution = fieldsOf<ToolExecutionRecord>({ id: true, name: true, arguments: true, result: true, error: true, executionTimeMs: true })
const notification = fieldsOf<JobNotification>({ id: true, userId: true, jobId: true, threadId: true, kind: true, title: true, body: true, createdAt: true, readAt: true })
const thread = fieldsOf<ChatThread>({ id: true, userId: true, title: true, createdAt: true, updatedAt: true, activeMessageId: true, pinned: true, folderId: true, settings: true })
const message = fieldsOf<ThreadMessage>({
  id: true, threadId: true, role: true, content: true, createdAt: true, parentId: true, attachments: true, model: true, jobId: true, status: true,
  reasoning: true, toolCalls: true, error: true, finishReason: true, usage: true, feedback: true, steers: true,
})
const attachment = fieldsOf<MessageAttachment>({ id: true, name: true, mediaType: true, kind: true, size: true })
const workflow = fieldsOf<SavedWorkflow>({ id: true, userId: true, name: true, definition: true, createdAt: true, updatedAt: true, version: true })
const workflowVersion = fieldsOf<WorkflowVersion>({ workflowId: true, version: true, name: true, definition: true, createdAt: true, createdBy: true, note: true })

describe('shapes in shared/types match every store', () => {
  it('jobs', () => {
    // listedContentLength is worked out when a store lists jobs without their text.
    expect(sqliteColumns('background_jobs')).toEqual(stored(job, { elsewhere: ['listedContentLength'], storageOnly: ['log_kept'] }))
    // Convex keeps tool calls, checkpoints and the text (in chunks) in their own tables, and the lease on the job.
    expect(convexFields('background_jobs')).toEqual(stored(job, {
      rename: { id: 'job_id' },
      elsewhere: ['activeToolCalls', 'toolRounds', 'checkpoint', 'listedContentLength'],
      storageOnly: ['lease_owner', 'lease_expires_at', 'abort_requested_at', 'content_length', 'reasoning_length', 'text_generation', 'log_kept'],
    }))
    expect(convexFields('job_checkpoints')).toEqual(['checkpoint', 'job_id'])
    expect(convexFields('job_text')).toEqual(['job_id', 'kind', 'start', 'text'])
  })

  it('job run-log events', () => {
    const event = fieldsOf<StoredJobEvent>({ seq: true, attempt: true, event: true, omitted: true, superseded: true })
    // Both keep the event as JSON (`body`) with its type beside it, whether kept or omitted.
    const expected = ['attempt', 'body', 'job_id', 'seq', 'superseded', 'type']
    expect(event.filter(field => field !== 'event' && field !== 'omitted').every(field => expected.includes(field))).toBe(true)
    expect(sqliteColumns('job_events')).toEqual(expected)
    expect(convexFields('job_events')).toEqual(expected)
  })

  it('job statuses, types, errors and usage', () => {
    expect(literalsOf(jobStatus)).toEqual(jobStatuses)
    expect(sqliteCheck('background_jobs', 'status')).toEqual(jobStatuses)
    expect(sqliteCheck('background_jobs', 'type')).toEqual(jobTypes)
    expect(literalsOf(schema.tables.background_jobs.validator.fields.type)).toEqual(jobTypes)
    expect(Object.keys(jobError.fields).sort()).toEqual(fieldsOf<JobError>({ message: true, kind: true, status: true, hint: true }).sort())
    expect(Object.keys(usage.fields).sort()).toEqual(fieldsOf<Usage>({ promptTokens: true, completionTokens: true, totalTokens: true, cachedTokens: true, reasoningTokens: true, cost: true }).sort())
  })

  it('tool calls and their executions (Convex keeps both in one row per call)', () => {
    expect(convexFields('job_tool_calls')).toEqual(stored(toolCall, {
      rename: { id: 'call_id', result: 'display_result' },
      storageOnly: ['job_id', 'position', 'active', 'executed'],
    }))
    const executed = schema.tables.job_tool_calls.validator.fields.executed.fields
    expect(Object.keys(executed).sort()).toEqual(stored(execution, { elsewhere: ['id', 'name', 'arguments'], storageOnly: ['sequence'] }))
    expect(literalsOf(schema.tables.job_tool_calls.validator.fields.status)).toEqual(membersOf<ActiveToolCall['status']>({ pending: true, running: true, completed: true, error: true }))
  })

  it('notifications', () => {
    expect(sqliteColumns('job_notifications')).toEqual(stored(notification))
    expect(convexFields('job_notifications')).toEqual(stored(notification, { elsewhere: ['id'] }))
    expect(literalsOf(schema.tables.job_notifications.validator.fields.kind)).toEqual(membersOf<JobNotification['kind']>({ 'job-complete': true, 'job-error': true, 'job-aborted': true, 'input-needed': true }))
  })

  it('threads and messages', () => {
    expect(sqliteColumns('threads')).toEqual(stored(thread))
    expect(convexFields('threads')).toEqual(stored(thread, { rename: { id: 'thread_id' }, storageOnly: ['search_title'] }))
    expect(sqliteColumns('thread_messages')).toEqual(stored(message, { storageOnly: ['sequence', 'feedback_at'] }))
    expect(convexFields('thread_messages')).toEqual(stored(message, { rename: { id: 'message_id' }, storageOnly: ['user_id', 'search_text', 'feedback_at', 'content_parts', 'reasoning_parts', 'tool_calls_parts'] }))
    const settings = fieldsOf<ChatSettings>({ systemPrompt: true, temperature: true, topP: true, maxTokens: true, reasoningEffort: true, knowledgeBaseIds: true }).sort()
    expect(Object.keys(chatSettings.fields).sort()).toEqual(settings)
    expect(Object.keys(chatSettingsSchema.shape).sort()).toEqual(settings)
    expect(Object.keys(messageFeedback.fields).sort()).toEqual(fieldsOf<MessageFeedback>({ rating: true, reason: true, at: true }).sort())
    const roles = membersOf<ThreadMessage['role']>({ user: true, assistant: true })
    expect(sqliteCheck('thread_messages', 'role')).toEqual(roles)
    expect(literalsOf(schema.tables.thread_messages.validator.fields.role)).toEqual(roles)
  })

  it('queued messages (sqlite keeps the text, model, tools, sealed key and steered step as one JSON body)', () => {
    const queued = fieldsOf<StoredQueuedMessage>({ id: true, threadId: true, userId: true, content: true, model: true, tools: true, position: true, createdAt: true, updatedAt: true, steerJobId: true, steerNodeId: true, blocked: true, sending: true, apiKeyCiphertext: true })
    expect(convexFields('thread_queue')).toEqual(stored(queued, { rename: { id: 'item_id' } }))
    expect(sqliteColumns('thread_queue')).toEqual(stored(queued, { elsewhere: ['content', 'model', 'tools', 'apiKeyCiphertext', 'steerNodeId'], storageOnly: ['body'] }))
  })

  it('files sent with messages', () => {
    expect(sqliteColumns('thread_attachments')).toEqual(stored(attachment, { storageOnly: ['thread_id', 'user_id', 'created_at', 'bytes'] }))
    expect(convexFields('thread_attachments')).toEqual(stored(attachment, { rename: { id: 'attachment_id' }, storageOnly: ['thread_id', 'user_id', 'created_at', 'chunks'] }))
    expect(Object.keys(messageAttachment.fields).sort()).toEqual([...attachment].sort())
    const kinds = membersOf<MessageAttachment['kind']>({ image: true, text: true })
    expect(sqliteCheck('thread_attachments', 'kind')).toEqual(kinds)
    expect(literalsOf(schema.tables.thread_attachments.validator.fields.kind)).toEqual(kinds)
  })

  it('saved workflows', () => {
    expect(sqliteColumns('workflows')).toEqual(stored(workflow))
    expect(convexFields('workflows')).toEqual(stored(workflow, { rename: { id: 'workflow_id' } }))
    expect(sqliteColumns('workflow_versions')).toEqual(stored(workflowVersion))
    expect(convexFields('workflow_versions')).toEqual(stored(workflowVersion))
  })

  it('usage by day, and by day and model', () => {
    const daily = fieldsOf<DailyUsage>({ userId: true, day: true, tokens: true, cost: true, jobs: true })
    const byModel = fieldsOf<ModelUsage>({ userId: true, day: true, model: true, tokens: true, cost: true, jobs: true })
    expect(sqliteColumns('usage_daily')).toEqual(stored(daily))
    expect(convexFields('usage_daily')).toEqual(stored(daily))
    expect(sqliteColumns('usage_by_model')).toEqual(stored(byModel))
    expect(convexFields('usage_by_model')).toEqual(stored(byModel))
  })
})
