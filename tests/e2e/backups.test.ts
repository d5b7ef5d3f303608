/**
 * Backups, restores and upgrades (issue 37) against the built server: `npm run backup` while
 * answers stream and files are being attached, `npm run restore` into a new data directory, and a
 * server started on it that has every account, conversation, file, workflow and saved credential
 * (the credential decrypts: a tool reads it). A backup of a newer schema is refused with a message.
 * A person's own export holds exactly their data; deleting their own account removes it.
 */
import { createECDH, randomBytes } from 'node:crypto'
import { execFile } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import BetterSqlite3 from 'better-sqlite3'
import { beforeAll, describe, expect, it, vi } from 'vitest'
import { unzipSync } from 'fflate'
import { gatedTextReply, textReply, toolCallReply, useFakeOpenRouter } from '../support/fake-openrouter'
import { SessionClient, waitForJobEnd } from '../support/job-stream-client'
import { useAppServers, useDataDirs } from '../support/built-app'

const run = promisify(execFile)
const ROOT = new URL('../..', import.meta.url).pathname
const MODEL = 'openai/gpt-4o-mini'
const PASSWORD = 'a long enough password for root'

const fake = useFakeOpenRouter()
const dirs = useDataDirs('or3-backups-e2e-')
let toolsDir: string
const servers = useAppServers(() => ({
  NUXT_OPENROUTER_BASE_URL: fake.url,
  NUXT_OPENROUTER_API_KEY: 'sk-or-v1-backups-test-key',
  NUXT_OPENROUTER_RETRY_BASE_DELAY_MS: '10',
  NUXT_TOOLS_DYNAMIC_DIR: toolsDir,
}))

beforeAll(() => {
  toolsDir = dirs.fresh()
  // Reads the person's saved credential: it answers only if the restored server can decrypt it.
  writeFileSync(join(toolsDir, 'github-whoami.ts'), `
export default {
  name: 'github_whoami',
  description: 'Says which GitHub token it would use.',
  requiresCredentials: ['github/token'],
  handler: (_args: Record<string, never>, context: { credentials: { get: (service: string, key: string) => string | undefined } }) => ({ token: context.credentials.get('github', 'token') }),
}
`)
})

/** `npm run <script> -- <argument>` with NUXT_DATA_DIR (and a passphrase); its exit code and output. */
async function npmScript(script: 'backup' | 'restore', argument: string, env: Record<string, string>): Promise<{ code: number, output: string }> {
  try {
    const { stdout, stderr } = await run('node', [`scripts/${script}.mjs`, argument], { cwd: ROOT, env: { ...process.env, ...env } })
    return { code: 0, output: stdout + stderr }
  } catch (error) {
    const failed = error as { code: number, stdout: string, stderr: string }
    return { code: failed.code, output: failed.stdout + failed.stderr }
  }
}

describe('backups and restores', () => {
  it('backs up while answers stream and files arrive, restores into a new directory, and the server there has everything', async () => {
    const dataDir = dirs.fresh()
    const a = await servers.start({ NUXT_DATA_DIR: dataDir })
    const root = new SessionClient(a.url)
    expect((await root.post('/api/auth/register', { name: 'Root', password: PASSWORD })).status).toBe(201)
    expect((await root.fetch('/api/credentials/github', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ values: { token: 'ghp_kept_across_the_restore' } }) })).status).toBe(200)
    const workflow = await (await root.post('/api/workflows', { definition: { version: 1, name: 'Kept', nodes: [{ id: 'start', kind: 'start' }, { id: 'out', kind: 'output' }], edges: [{ from: 'start', to: 'out' }] } })).json()
    const thread = await (await root.post('/api/threads', {})).json()
    fake.script(() => textReply('First answer.'))
    const first = await root.post(`/api/threads/${thread.id}/messages`, { content: 'Keep this file.', model: MODEL, attachments: [{ name: 'notes.md', data: Buffer.from('# Notes\nkept').toString('base64') }] })
    expect(first.status).toBe(202)
    await waitForJobEnd(root, (await first.json()).jobId)

    // While an answer streams and more files are sent, the backup is made.
    const gated = gatedTextReply(['Streaming while the backup runs. ', 'Done.'])
    fake.script(() => gated.reply)
    const streaming = await root.startJob({ model: MODEL, messages: [{ role: 'user', content: 'Go on.' }] })
    const backups = dirs.fresh()
    const attaching = Promise.all(Array.from({ length: 4 }, async (_, index) => {
      const other = await (await root.post('/api/threads', {})).json()
      fake.script(() => textReply('Noted.'))
      return root.post(`/api/threads/${other.id}/messages`, { content: `File ${index}`, model: MODEL, attachments: [{ name: `file-${index}.txt`, data: Buffer.from(`content ${index} `.repeat(5_000)).toString('base64') }] })
    }))
    const backup = await npmScript('backup', backups, { NUXT_DATA_DIR: dataDir, OR3_BACKUP_PASSPHRASE: 'a passphrase for the e2e backup' })
    expect(backup.code, backup.output).toBe(0)
    expect(backup.output).toMatch(/Backed up schema version \d+ to .*\(encrypted\)/)
    await attaching
    gated.openAll()
    await waitForJobEnd(root, streaming)
    await a.stop()

    // Restored into an empty directory, with the passphrase.
    const [made] = readdirSync(backups)
    const backupDir = join(backups, made!)
    const restoredDir = dirs.fresh()
    const restored = await npmScript('restore', backupDir, { NUXT_DATA_DIR: restoredDir, OR3_BACKUP_PASSPHRASE: 'a passphrase for the e2e backup' })
    expect(restored.code, restored.output).toBe(0)
    const db = new BetterSqlite3(join(restoredDir, 'or3.sqlite'), { readonly: true })
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok')
    db.close()

    const b = await servers.start({ NUXT_DATA_DIR: restoredDir })
    const again = new SessionClient(b.url)
    expect((await again.post('/api/auth/login', { name: 'Root', password: PASSWORD })).status).toBe(200)
    const kept = await again.json(`/api/threads/${thread.id}`)
    expect(kept.messages.map((message: { content: string }) => message.content)).toEqual(['Keep this file.', 'First answer.'])
    const file = kept.messages[0].attachments[0]
    expect(await (await again.fetch(`/api/threads/${thread.id}/attachments/${file.id}`)).text()).toBe('# Notes\nkept')
    expect((await again.json(`/api/workflows/${workflow.id}`)).name).toBe('Kept')
    await vi.waitFor(async () => expect((await again.json('/api/tools')).tools.some((tool: { name: string }) => tool.name === 'github_whoami')).toBe(true), { timeout: 15_000, interval: 100 })
    fake.script(request => request.body.messages.some(message => message.role === 'tool') ? textReply('It works.') : toolCallReply([{ id: 'call_whoami', name: 'github_whoami', arguments: '{}' }]))
    const job = await waitForJobEnd(again, await again.startJob({ model: MODEL, messages: [{ role: 'user', content: 'Who am I on GitHub?' }], _tools: ['github_whoami'] }), 30_000)
    expect(job.toolRounds[0]!.toolCalls[0]!.result).toBe('{"token":"ghp_kept_across_the_restore"}')
  })

  it('refuses to restore a backup of a newer schema, or into a directory that holds data, saying what to do', async () => {
    const dataDir = dirs.fresh()
    const a = await servers.start({ NUXT_DATA_DIR: dataDir })
    expect((await new SessionClient(a.url).post('/api/auth/register', { name: 'Root', password: PASSWORD })).status).toBe(201)
    const backups = dirs.fresh()
    expect((await npmScript('backup', backups, { NUXT_DATA_DIR: dataDir })).code).toBe(0)
    const backupDir = join(backups, readdirSync(backups)[0]!)

    // An admin makes one from the server (Admin → Backups); nobody else may.
    const admin = new SessionClient(a.url)
    expect((await admin.post('/api/auth/login', { name: 'Root', password: PASSWORD })).status).toBe(200)
    const made = await admin.fetch('/api/admin/backups', { method: 'POST' })
    expect(made.status).toBe(201)
    const summary = await made.json()
    expect(summary).toMatchObject({ name: expect.stringMatching(/^or3-backup-/), includesSecret: true })
    expect((await admin.json('/api/admin/backups')).backups.map((backup: { name: string }) => backup.name)).toContain(summary.name)
    expect(readdirSync(join(dataDir, 'backups'))).toContain(summary.name)
    expect((await new SessionClient(a.url).fetch('/api/admin/backups', { method: 'POST' })).status).toBe(403)

    const occupied = await npmScript('restore', backupDir, { NUXT_DATA_DIR: dataDir })
    expect(occupied.code).toBe(1)
    expect(occupied.output).toMatch(/is not empty .*restore into an empty directory/)

    const manifestPath = join(backupDir, 'manifest.json')
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'))
    writeFileSync(manifestPath, JSON.stringify({ ...manifest, schemaVersion: manifest.schemaVersion + 1 }))
    const newer = await npmScript('restore', backupDir, { NUXT_DATA_DIR: mkdtempSync(join(tmpdir(), 'or3-newer-')) })
    expect(newer.code).toBe(1)
    expect(newer.output).toMatch(/newer than this server knows .*Restore it with that version of the app or a later one/)
  })
})

describe('a person\'s own data', () => {
  it('exports exactly the person\'s data as a zip, and deletes their account and data with their password', async () => {
    const dataDir = dirs.fresh()
    const app = await servers.start({ NUXT_DATA_DIR: dataDir })
    const root = new SessionClient(app.url)
    expect((await root.post('/api/auth/register', { name: 'Root', password: PASSWORD })).status).toBe(201)
    expect((await root.post('/api/admin/users', { name: 'Bea', password: 'bea has a long password' })).status).toBe(201)
    const bea = new SessionClient(app.url)
    expect((await bea.post('/api/auth/login', { name: 'Bea', password: 'bea has a long password' })).status).toBe(200)

    const keep = async (who: SessionClient, words: string) => {
      const thread = await (await who.post('/api/threads', {})).json()
      fake.script(() => textReply(`Answer about ${words}.`))
      const sent = await who.post(`/api/threads/${thread.id}/messages`, { content: `Tell me about ${words}`, model: MODEL, attachments: [{ name: `${words}.txt`, data: Buffer.from(`notes on ${words}`).toString('base64') }] })
      await waitForJobEnd(who, (await sent.json()).jobId)
      expect((await who.post('/api/workflows', { definition: { version: 1, name: `Flow of ${words}`, nodes: [{ id: 'start', kind: 'start' }, { id: 'out', kind: 'output' }], edges: [{ from: 'start', to: 'out' }] } })).status).toBe(201)
      return thread.id as string
    }
    const rootThread = await keep(root, 'lighthouses')
    const beaThread = await keep(bea, 'beekeeping')

    const exported = await bea.fetch('/api/me/export')
    expect(exported.status).toBe(200)
    expect(exported.headers.get('content-type')).toBe('application/zip')
    expect(exported.headers.get('content-disposition')).toMatch(/^attachment; filename="or3-my-data-\d{4}-\d{2}-\d{2}\.zip"$/)
    const files = unzipSync(new Uint8Array(await exported.arrayBuffer()))
    const names = Object.keys(files)
    expect(names).toEqual(expect.arrayContaining(['README.txt', 'account.json', 'workflow-runs.json']))
    const folder = names.find(name => name.endsWith(`${beaThread}/conversation.json`))!.replace('/conversation.json', '')
    expect(JSON.parse(new TextDecoder().decode(files['account.json']))).toMatchObject({ account: { name: 'Bea', role: 'user' } })
    expect(new TextDecoder().decode(files[`${folder}/conversation.md`])).toContain('Tell me about beekeeping')
    expect(new TextDecoder().decode(files[names.find(name => name.startsWith(`${folder}/files/`) && name.endsWith('beekeeping.txt'))!])).toBe('notes on beekeeping')
    expect(names.some(name => /^workflows\/flow-of-beekeeping-/.test(name))).toBe(true)
    // Nothing of anyone else's.
    const everything = Object.values(files).map(bytes => new TextDecoder().decode(bytes)).join('\n')
    expect(everything).not.toMatch(/lighthouses|Root/)
    expect(names.some(name => name.includes(rootThread))).toBe(false)

    // More that Bea owns: a webhook and a schedule on her workflow, an API token, a preference.
    const beaWorkflow = ((await bea.json('/api/workflows')).workflows as Array<{ id: string }>)[0]!.id
    expect((await bea.post(`/api/workflows/${beaWorkflow}/webhook`, {})).status).toBe(201)
    const scheduled = await bea.post(`/api/workflows/${beaWorkflow}/schedules`, { cron: '0 8 * * *', timezone: 'UTC', prompt: 'the morning digest' })
    expect(scheduled.status, await scheduled.clone().text()).toBe(201)
    expect((await bea.post('/api/auth/tokens', { name: 'script', password: 'bea has a long password' })).status).toBe(201)
    // Notifications on for a device (Web Push).
    const deviceKey = createECDH('prime256v1')
    deviceKey.generateKeys()
    expect((await bea.post('/api/push/subscriptions', { endpoint: 'https://push.example.com/send/bea', keys: { p256dh: deviceKey.getPublicKey().toString('base64url'), auth: randomBytes(16).toString('base64url') } })).status).toBe(201)

    // Deleting needs the password; the last admin cannot leave without another.
    const wrong = await bea.fetch('/api/me', { method: 'DELETE', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ password: 'not it at all' }) })
    expect(wrong.status).toBe(403)
    const lastAdmin = await root.fetch('/api/me', { method: 'DELETE', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ password: PASSWORD }) })
    expect(lastAdmin.status).toBe(409)
    const deleted = await bea.fetch('/api/me', { method: 'DELETE', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ password: 'bea has a long password' }) })
    expect(deleted.status).toBe(200)
    expect((await bea.post('/api/auth/login', { name: 'Bea', password: 'bea has a long password' })).status).toBe(401)
    const db = new BetterSqlite3(join(dataDir, 'or3.sqlite'), { readonly: true })
    const count = (sql: string, value: string) => (db.prepare(sql).get(value) as { n: number }).n
    const beaId = JSON.parse(new TextDecoder().decode(files['account.json'])).account.id as string
    expect(count('SELECT count(*) AS n FROM threads WHERE user_id = ?', beaId)).toBe(0)
    expect(count('SELECT count(*) AS n FROM thread_attachments WHERE user_id = ?', beaId)).toBe(0)
    expect(count('SELECT count(*) AS n FROM workflows WHERE user_id = ?', beaId)).toBe(0)
    expect(count('SELECT count(*) AS n FROM accounts WHERE id = ?', beaId)).toBe(0)
    // And nothing anywhere names her: every column of every table, settings keys and values included
    // (a webhook's record, a schedule, a grant), her ended jobs and their notifications too.
    const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all() as Array<{ name: string }>).map(row => row.name)
    expect(tables).toEqual(expect.arrayContaining(['settings', 'background_jobs', 'job_notifications', 'workflows', 'threads']))
    const naming = tables.flatMap((table) => {
      const columns = (db.prepare(`SELECT name FROM pragma_table_info(?)`).all(table) as Array<{ name: string }>).map(row => row.name)
      return columns.flatMap((column) => {
        const found = db.prepare(`SELECT substr(CAST("${column}" AS TEXT), 1, 80) AS v FROM "${table}" WHERE instr(CAST("${column}" AS TEXT), ?) > 0 LIMIT 1`).get(beaId) as { v: string } | undefined
        return found ? [`${table}.${column}: ${found.v}`] : []
      })
    })
    expect(naming).toEqual([])
    // Root's are untouched.
    expect((await root.json(`/api/threads/${rootThread}`)).messages).toHaveLength(2)
    db.close()
  })
})
