/**
 * The schema of the app's sqlite file (jobs, notifications, threads, messages, workflows, accounts) as
 * numbered migrations. `PRAGMA user_version` records the last one applied. Never edit a shipped
 * migration: add the next one. tests/unit/stores/shapes.test.ts checks the tables against
 * shared/types.
 */
import { KNOWLEDGE_TABLES, KNOWLEDGE_VECTOR_TABLES } from '../knowledge/sqlite-schema'
import { MESSAGE_QUEUE_TABLES } from '../threads/sqlite-queue-schema'

/** Ordered migrations; index + 1 is the version. */
export const SQLITE_MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE background_jobs (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    thread_id TEXT NOT NULL,
    message_id TEXT NOT NULL,
    type TEXT NOT NULL CHECK (type IN ('chat', 'workflow')),
    model TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('streaming', 'complete', 'error', 'aborted')),
    content TEXT NOT NULL DEFAULT '',
    reasoning TEXT NOT NULL DEFAULT '',
    chunks_received INTEGER NOT NULL DEFAULT 0,
    active_tool_calls TEXT NOT NULL DEFAULT '[]',
    tool_rounds TEXT NOT NULL DEFAULT '[]',
    workflow_state TEXT,
    usage TEXT,
    error TEXT,
    finish_reason TEXT,
    started_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    completed_at INTEGER,
    resume_count INTEGER NOT NULL DEFAULT 0,
    request TEXT,
    checkpoint TEXT,
    api_key_ciphertext TEXT
  );
  CREATE INDEX background_jobs_by_user_status ON background_jobs (user_id, status, started_at);
  CREATE INDEX background_jobs_by_thread_message ON background_jobs (thread_id, message_id);
  CREATE INDEX background_jobs_by_status_completed ON background_jobs (status, completed_at);
  CREATE TABLE job_notifications (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    job_id TEXT NOT NULL,
    thread_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    title TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    read_at INTEGER
  );
  CREATE INDEX job_notifications_by_user_created ON job_notifications (user_id, created_at);
  CREATE INDEX job_notifications_by_job ON job_notifications (job_id);
  `,
  `
  CREATE TABLE threads (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    title TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  );
  CREATE INDEX threads_by_user_updated ON threads (user_id, updated_at);
  CREATE TABLE thread_messages (
    id TEXT PRIMARY KEY,
    thread_id TEXT NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
    sequence INTEGER NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
    content TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    model TEXT,
    job_id TEXT,
    status TEXT,
    reasoning TEXT,
    tool_calls TEXT,
    error TEXT,
    finish_reason TEXT
  );
  CREATE INDEX thread_messages_by_thread ON thread_messages (thread_id, created_at, sequence);
  `,
  `
  CREATE TABLE workflows (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    name TEXT NOT NULL,
    definition TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  );
  CREATE INDEX workflows_by_user_updated ON workflows (user_id, updated_at);
  `,
  `
  CREATE TABLE accounts (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    name_key TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('admin', 'user')),
    disabled INTEGER NOT NULL DEFAULT 0,
    session_version INTEGER NOT NULL DEFAULT 1,
    created_at INTEGER NOT NULL
  );
  CREATE TABLE api_tokens (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    prefix TEXT NOT NULL,
    token_hash TEXT NOT NULL UNIQUE,
    created_at INTEGER NOT NULL,
    last_used_at INTEGER
  );
  CREATE INDEX api_tokens_by_user ON api_tokens (user_id, created_at);
  CREATE TABLE invites (
    code_hash TEXT PRIMARY KEY,
    created_by TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    used_at INTEGER
  );
  CREATE TABLE settings (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
  );
  `,
  `
  CREATE TABLE usage_daily (
    user_id TEXT NOT NULL,
    day TEXT NOT NULL,
    tokens INTEGER NOT NULL DEFAULT 0,
    cost REAL NOT NULL DEFAULT 0,
    jobs INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (user_id, day)
  );
  CREATE INDEX usage_daily_by_day ON usage_daily (day, tokens);
  `,
  `
  CREATE TABLE locks (
    key TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    expires_at INTEGER NOT NULL
  );
  `,
  `
  CREATE TABLE job_input_requests (
    id TEXT PRIMARY KEY,
    job_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    key TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('open', 'answered', 'expired', 'cancelled')),
    created_at INTEGER NOT NULL,
    body TEXT NOT NULL,
    UNIQUE (job_id, key)
  );
  CREATE INDEX job_input_requests_by_user_status ON job_input_requests (user_id, status, created_at);
  `,
  `
  CREATE VIRTUAL TABLE thread_messages_fts USING fts5(content, content = 'thread_messages', content_rowid = 'rowid', tokenize = 'unicode61 remove_diacritics 2');
  CREATE TRIGGER thread_messages_fts_insert AFTER INSERT ON thread_messages BEGIN
    INSERT INTO thread_messages_fts (rowid, content) VALUES (new.rowid, new.content);
  END;
  CREATE TRIGGER thread_messages_fts_delete AFTER DELETE ON thread_messages BEGIN
    INSERT INTO thread_messages_fts (thread_messages_fts, rowid, content) VALUES ('delete', old.rowid, old.content);
  END;
  CREATE TRIGGER thread_messages_fts_update AFTER UPDATE OF content ON thread_messages BEGIN
    INSERT INTO thread_messages_fts (thread_messages_fts, rowid, content) VALUES ('delete', old.rowid, old.content);
    INSERT INTO thread_messages_fts (rowid, content) VALUES (new.rowid, new.content);
  END;
  INSERT INTO thread_messages_fts (thread_messages_fts) VALUES ('rebuild');
  CREATE VIRTUAL TABLE threads_fts USING fts5(title, content = 'threads', content_rowid = 'rowid', tokenize = 'unicode61 remove_diacritics 2');
  CREATE TRIGGER threads_fts_insert AFTER INSERT ON threads BEGIN
    INSERT INTO threads_fts (rowid, title) VALUES (new.rowid, new.title);
  END;
  CREATE TRIGGER threads_fts_delete AFTER DELETE ON threads BEGIN
    INSERT INTO threads_fts (threads_fts, rowid, title) VALUES ('delete', old.rowid, old.title);
  END;
  CREATE TRIGGER threads_fts_update AFTER UPDATE OF title ON threads BEGIN
    INSERT INTO threads_fts (threads_fts, rowid, title) VALUES ('delete', old.rowid, old.title);
    INSERT INTO threads_fts (rowid, title) VALUES (new.rowid, new.title);
  END;
  INSERT INTO threads_fts (threads_fts) VALUES ('rebuild');
  `,
  `
  ALTER TABLE threads ADD COLUMN active_message_id TEXT;
  ALTER TABLE thread_messages ADD COLUMN parent_id TEXT;
  `,
  `
  ALTER TABLE thread_messages ADD COLUMN attachments TEXT;
  CREATE TABLE thread_attachments (
    id TEXT PRIMARY KEY,
    thread_id TEXT NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
    user_id TEXT NOT NULL,
    name TEXT NOT NULL,
    media_type TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('image', 'text')),
    size INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    bytes BLOB NOT NULL
  );
  CREATE INDEX thread_attachments_by_thread ON thread_attachments (thread_id);
  CREATE INDEX thread_attachments_by_user ON thread_attachments (user_id);
  `,
  // A job may end 'rejected' (a person said no): the status CHECK is widened by rebuilding the table.
  `
  CREATE TABLE background_jobs_next (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    thread_id TEXT NOT NULL,
    message_id TEXT NOT NULL,
    type TEXT NOT NULL CHECK (type IN ('chat', 'workflow')),
    model TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('streaming', 'complete', 'error', 'aborted', 'rejected')),
    content TEXT NOT NULL DEFAULT '',
    reasoning TEXT NOT NULL DEFAULT '',
    chunks_received INTEGER NOT NULL DEFAULT 0,
    active_tool_calls TEXT NOT NULL DEFAULT '[]',
    tool_rounds TEXT NOT NULL DEFAULT '[]',
    workflow_state TEXT,
    usage TEXT,
    error TEXT,
    finish_reason TEXT,
    started_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    completed_at INTEGER,
    resume_count INTEGER NOT NULL DEFAULT 0,
    request TEXT,
    checkpoint TEXT,
    api_key_ciphertext TEXT
  );
  INSERT INTO background_jobs_next SELECT * FROM background_jobs;
  DROP TABLE background_jobs;
  ALTER TABLE background_jobs_next RENAME TO background_jobs;
  CREATE INDEX background_jobs_by_user_status ON background_jobs (user_id, status, started_at);
  CREATE INDEX background_jobs_by_thread_message ON background_jobs (thread_id, message_id);
  CREATE INDEX background_jobs_by_status_completed ON background_jobs (status, completed_at);
  `,
  // Every save of a workflow is a version; a workflow saved before has its current definition as version 1.
  `
  ALTER TABLE workflows ADD COLUMN version INTEGER NOT NULL DEFAULT 1;
  CREATE TABLE workflow_versions (
    workflow_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    name TEXT NOT NULL,
    definition TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    created_by TEXT NOT NULL,
    note TEXT,
    PRIMARY KEY (workflow_id, version)
  );
  INSERT INTO workflow_versions (workflow_id, version, name, definition, created_at, created_by, note)
    SELECT id, 1, name, definition, updated_at, user_id, NULL FROM workflows;
  `,
  // Workflow runs are kept apart from their jobs (whose live state goes minutes after they end), for
  // the operator's retention: a summary's columns to list and filter by, and the run as last seen.
  `
  CREATE TABLE workflow_runs (
    job_id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    workflow_id TEXT NOT NULL,
    status TEXT NOT NULL,
    started_at INTEGER NOT NULL,
    finished_at INTEGER,
    summary TEXT NOT NULL,
    job TEXT NOT NULL
  );
  CREATE INDEX workflow_runs_by_user_started ON workflow_runs (user_id, started_at DESC, job_id DESC);
  CREATE INDEX workflow_runs_by_workflow_started ON workflow_runs (workflow_id, started_at DESC, job_id DESC);
  CREATE INDEX workflow_runs_by_status ON workflow_runs (status, started_at);
  CREATE INDEX workflow_runs_by_finished ON workflow_runs (finished_at);
  `,
  // A person's organising and tuning of conversations (pins, folders, chat settings) and their
  // 👍 / 👎 on answers, read by the admin's report through the feedback index.
  `
  ALTER TABLE threads ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE threads ADD COLUMN folder_id TEXT;
  ALTER TABLE threads ADD COLUMN settings TEXT;
  CREATE INDEX threads_by_user_pinned_updated ON threads (user_id, pinned DESC, updated_at DESC);
  ALTER TABLE thread_messages ADD COLUMN feedback TEXT;
  ALTER TABLE thread_messages ADD COLUMN feedback_at INTEGER;
  CREATE INDEX thread_messages_by_feedback_at ON thread_messages (feedback_at) WHERE feedback_at IS NOT NULL;
  `,
  // Workspaces: the files a conversation's (or a workflow run's) tools read and write, counted per
  // person for their quota.
  `
  CREATE TABLE workspace_files (
    workspace_id TEXT NOT NULL,
    path TEXT NOT NULL,
    user_id TEXT NOT NULL,
    size INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    bytes BLOB NOT NULL,
    PRIMARY KEY (workspace_id, path)
  );
  CREATE INDEX workspace_files_by_user ON workspace_files (user_id);
  `,
  // A workflow run's state in pieces (shared/workflow-state-parts.ts): each loop iteration's
  // and child run's state a row of its own, written only when it changed; they go with their job.
  `
  CREATE TABLE job_workflow_state_parts (
    job_id TEXT NOT NULL,
    path TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (job_id, path)
  );
  CREATE TRIGGER job_workflow_state_parts_go_with_their_job AFTER DELETE ON background_jobs
  BEGIN
    DELETE FROM job_workflow_state_parts WHERE job_id = OLD.id;
  END;
  `,
  // A job's run log (server/lib/jobs/run-log.ts): the events its viewers got, numbered per job,
  // each with the run that wrote it, kept while it runs (and `log_kept` a minute after its end)
  // so a viewer resumes exactly after a restart.
  // Jobs from before have none: a finished one reads as compacted, a running one resumes and logs on.
  `
  ALTER TABLE background_jobs ADD COLUMN event_seq INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE background_jobs ADD COLUMN log_kept INTEGER NOT NULL DEFAULT 0;
  CREATE INDEX background_jobs_with_kept_logs ON background_jobs (completed_at) WHERE log_kept = 1;
  CREATE TABLE job_events (
    job_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    attempt INTEGER NOT NULL,
    type TEXT NOT NULL,
    body TEXT,
    superseded INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (job_id, seq)
  ) WITHOUT ROWID;
  CREATE TRIGGER job_events_go_with_their_job AFTER DELETE ON background_jobs
  BEGIN
    DELETE FROM job_events WHERE job_id = OLD.id;
  END;
  `,
  // The bytes each account's and each workflow's kept runs take (`size` per run, totals kept by
  // triggers), so the history can hold them to the operator's caps without summing on every write.
  `
  ALTER TABLE workflow_runs ADD COLUMN size INTEGER NOT NULL DEFAULT 0;
  UPDATE workflow_runs SET size = length(CAST(summary AS BLOB)) + length(CAST(job AS BLOB));
  CREATE INDEX workflow_runs_by_user_finished ON workflow_runs (user_id, finished_at);
  CREATE INDEX workflow_runs_by_workflow_finished ON workflow_runs (workflow_id, finished_at);
  CREATE TABLE workflow_run_bytes (owner TEXT PRIMARY KEY, bytes INTEGER NOT NULL) WITHOUT ROWID;
  INSERT INTO workflow_run_bytes SELECT 'user:' || user_id, SUM(size) FROM workflow_runs GROUP BY user_id;
  INSERT INTO workflow_run_bytes SELECT 'workflow:' || workflow_id, SUM(size) FROM workflow_runs GROUP BY workflow_id;
  CREATE TRIGGER workflow_run_bytes_on_insert AFTER INSERT ON workflow_runs
  BEGIN
    INSERT INTO workflow_run_bytes (owner, bytes) VALUES ('user:' || NEW.user_id, NEW.size) ON CONFLICT (owner) DO UPDATE SET bytes = bytes + excluded.bytes;
    INSERT INTO workflow_run_bytes (owner, bytes) VALUES ('workflow:' || NEW.workflow_id, NEW.size) ON CONFLICT (owner) DO UPDATE SET bytes = bytes + excluded.bytes;
  END;
  CREATE TRIGGER workflow_run_bytes_on_update AFTER UPDATE OF size ON workflow_runs
  BEGIN
    UPDATE workflow_run_bytes SET bytes = bytes + NEW.size - OLD.size WHERE owner IN ('user:' || NEW.user_id, 'workflow:' || NEW.workflow_id);
  END;
  CREATE TRIGGER workflow_run_bytes_on_delete AFTER DELETE ON workflow_runs
  BEGIN
    UPDATE workflow_run_bytes SET bytes = bytes - OLD.size WHERE owner IN ('user:' || OLD.user_id, 'workflow:' || OLD.workflow_id);
    DELETE FROM workflow_run_bytes WHERE owner IN ('user:' || OLD.user_id, 'workflow:' || OLD.workflow_id) AND bytes <= 0;
  END;
  `,
  // An answer's tokens and cost (JSON), written with its outcome when its job ends: shown under the
  // answer long after the job itself is gone.
  `
  ALTER TABLE thread_messages ADD COLUMN usage TEXT;
  `,
  // Sign-in through identity providers (OpenID Connect): which provider's person signs in to which
  // account. Gone with the account.
  `
  CREATE TABLE account_identities (
    provider TEXT NOT NULL,
    subject TEXT NOT NULL,
    account_id TEXT NOT NULL,
    email TEXT,
    created_at INTEGER NOT NULL,
    last_sign_in_at INTEGER NOT NULL,
    PRIMARY KEY (provider, subject)
  ) WITHOUT ROWID;
  CREATE INDEX account_identities_by_account ON account_identities (account_id);
  CREATE TRIGGER account_identities_go_with_their_account AFTER DELETE ON accounts
  BEGIN
    DELETE FROM account_identities WHERE account_id = OLD.id;
  END;
  `,
  // Usage by model: each job's models' shares per principal and UTC day, for Settings → Usage and
  // Admin → Usage (usage_daily stays the budgets' count). Empty at the upgrade: days before it have
  // no model rows.
  `
  CREATE TABLE usage_by_model (
    user_id TEXT NOT NULL,
    day TEXT NOT NULL,
    model TEXT NOT NULL,
    tokens INTEGER NOT NULL DEFAULT 0,
    cost REAL NOT NULL DEFAULT 0,
    jobs INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (user_id, day, model)
  ) WITHOUT ROWID;
  CREATE INDEX usage_by_model_by_day ON usage_by_model (day);
  `,
  // Knowledge bases (stores/knowledge/sqlite-schema.ts).
  KNOWLEDGE_TABLES,
  // Their passages' embeddings (the same file).
  KNOWLEDGE_VECTOR_TABLES,
  MESSAGE_QUEUE_TABLES, // conversations' queues and what was sent to running answers (threads/sqlite-queue-schema.ts)
]
