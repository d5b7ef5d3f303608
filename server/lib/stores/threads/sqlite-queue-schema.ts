/**
 * The sqlite schema of message queues and steers (a migration of stores/sqlite/migrations.ts):
 * the queue of each conversation, gone with it, and the messages people sent running answers,
 * kept with the job while it runs and with its answer after.
 */
export const MESSAGE_QUEUE_TABLES = `
  CREATE TABLE thread_queue (
    id TEXT PRIMARY KEY,
    thread_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    position REAL NOT NULL,
    body TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    steer_job_id TEXT,
    blocked TEXT,
    sending TEXT
  );
  CREATE INDEX thread_queue_by_thread ON thread_queue (thread_id, position);
  CREATE TRIGGER thread_queue_goes_with_its_thread AFTER DELETE ON threads
  BEGIN
    DELETE FROM thread_queue WHERE thread_id = OLD.id;
  END;
  ALTER TABLE thread_messages ADD COLUMN steers TEXT;
  ALTER TABLE background_jobs ADD COLUMN steers TEXT;
`
