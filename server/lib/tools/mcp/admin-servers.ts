/**
 * MCP servers as an admin manages them: the operator's (from the config file, shown but changed
 * only there) and the admin's own, added, edited and removed in the UI. The admin's servers are
 * kept in the account store's settings, so every instance runs the same set: this one applies a
 * change at once, the others on their next sync (`syncIntervalMs`).
 *
 * Secrets: header and environment values, and an OAuth client's secret or private key, are sealed (AES-256-GCM under the server secret) before
 * they are stored, and never shown again: the page gets a mask, and a mask sent back keeps the
 * saved value. A server that runs a command (stdio) runs it on this machine with the app's user,
 * so admins may add one only where the operator allows it (`mcp.adminCommands`).
 */
import { z } from 'zod'
import type { SecretBox } from '../../security/secret-box'
import type { SettingsReadWrite } from '../../stores/settings/settings-store'
import { MCP_SERVER_NAME, mcpServerProblems, mcpServerSchema, toMcpServerConfig, type McpServerConfig } from './config'
import type { McpServers } from './servers'
import { MCP_SECRET_MASK, type McpServerSettings, type McpServerSettingsList, type McpServerStatus } from '../../../../shared/types/tool'
import { DomainError, type HttpAnswer } from '../../domain-error'

const SETTING = 'mcp-servers'
/** Servers an admin may add (each may start a connection, or a child process). */
export const MAX_ADMIN_MCP_SERVERS = 50

/** A change an admin cannot make, with the status to answer and words that say what to do. */
export class McpAdminError extends DomainError {
  override name = 'McpAdminError'
  constructor(readonly statusCode: 400 | 403 | 404 | 409, message: string) {
    super(message)
  }

  httpAnswer(): HttpAnswer {
    const statusMessages = { 400: 'Invalid MCP server', 403: 'Not allowed', 404: 'No such MCP server', 409: 'Conflict' }
    return { statusCode: this.statusCode, statusMessage: statusMessages[this.statusCode], message: this.message }
  }

  static isInstance(error: unknown): error is McpAdminError {
    return error instanceof Error && error.name === 'McpAdminError'
  }
}

/** How an admin's server is stored: the file's shape with its secret values sealed. */
const storedSchema = z.object({
  servers: z.array(z.object({ name: z.string(), server: z.record(z.string(), z.unknown()) })).max(MAX_ADMIN_MCP_SERVERS * 2),
})
type StoredServers = z.infer<typeof storedSchema>

/** What the catalog needs. */
export interface McpServerCatalogOptions {
  servers: McpServers
  /** The operator's servers, from the config file. */
  fileServers: readonly McpServerConfig[]
  configFile: string | null
  settings: SettingsReadWrite
  secretBox: SecretBox
  commandsAllowed: boolean
  logger: { warn: (message: string) => void }
  /** How often the stored set is read again, for changes made on another instance (0: never). */
  syncIntervalMs: number
}

export class McpServerCatalog {
  private admin: Array<{ config: McpServerConfig, problem?: string, stored: Record<string, unknown> }> = []
  private lastStored: string | null = null
  private timer: ReturnType<typeof setInterval> | undefined
  private closed = false

  constructor(private readonly options: McpServerCatalogOptions) {}

  /** Loads the admin's servers, runs them with the operator's, and follows later changes. */
  async start(): Promise<void> {
    await this.sync(true)
    if (this.options.syncIntervalMs > 0 && !this.closed) {
      this.timer = setInterval(() => {
        this.sync(false).catch(error => this.options.logger.warn(`Reading the admin's MCP servers failed: ${(error as Error).message}`))
      }, this.options.syncIntervalMs)
      this.timer.unref?.()
    }
  }

  /** Every server with its settings (secrets masked) and state. */
  async list(): Promise<McpServerSettingsList> {
    await this.sync(false)
    const statuses = new Map(this.options.servers.statuses().map(status => [status.name, status]))
    const servers = [
      ...this.options.fileServers.map(config => settingsView(config, 'file', statuses.get(config.name))),
      ...this.admin.map(({ config, problem }) => ({ ...settingsView(config, 'admin', statuses.get(config.name)), ...(problem ? { problem } : {}) })),
    ]
    return { servers, commandsAllowed: this.options.commandsAllowed, configFile: this.options.configFile }
  }

  /** Adds the admin's server `name`, or replaces its settings (it reconnects). */
  async put(name: string, body: unknown): Promise<McpServerSettings> {
    if (!MCP_SERVER_NAME.test(name)) throw new McpAdminError(400, 'A server name is 1-32 letters, digits, "_" or "-"; it prefixes its tools\' names.')
    if (this.options.fileServers.some(config => config.name === name)) {
      throw new McpAdminError(409, `The server "${name}" comes from the config file${this.options.configFile ? ` ${this.options.configFile}` : ''}; change it there, or pick another name.`)
    }
    await this.sync(false)
    const existing = this.admin.find(entry => entry.config.name === name)
    if (!existing && this.admin.length >= MAX_ADMIN_MCP_SERVERS) throw new McpAdminError(409, `There are already ${MAX_ADMIN_MCP_SERVERS} servers added here, the most allowed; remove one first.`)
    const parsed = mcpServerSchema.safeParse(body)
    if (!parsed.success) {
      throw new McpAdminError(400, mcpServerProblems(parsed.error.issues, body).map(({ field, message }) => `${field.length > 0 ? `${field.join('.')}: ` : ''}${message}`).join('; '))
    }
    if ('command' in parsed.data && !this.options.commandsAllowed) {
      throw new McpAdminError(403, 'Adding a server that runs a command on this machine is switched off here (NUXT_MCP_ADMIN_COMMANDS=false). Give a Streamable HTTP URL instead, or ask the operator to add it to the MCP config file.')
    }
    const opened = existing ? this.openSecrets(existing.stored) : undefined
    const server = { ...parsed.data }
    // Saved secrets stay bound to where they were sent: a new URL (or a new command) gets none of
    // them back from a mask; the admin enters them again for the new target.
    const previous = opened && sameTarget(opened, server) ? opened : undefined
    const moved = opened !== undefined && previous === undefined
    if ('command' in server) server.env = keepMaskedSecrets(server.env, previous?.env, 'environment variable', moved)
    else {
      server.headers = keepMaskedSecrets(server.headers, previous?.headers, 'header', moved)
      if (typeof server.oauth === 'object') server.oauth = { ...server.oauth, ...keepMaskedSecrets(oauthSecrets(server.oauth), oauthSecrets(previous?.oauth), 'OAuth setting', moved) }
    }
    const stored = this.sealSecrets(server)
    const list = (await this.readStored()).servers.filter(entry => entry.name !== name)
    list.push({ name, server: stored })
    await this.writeStored({ servers: list })
    await this.sync(true)
    const config = toMcpServerConfig(name, server)
    return settingsView(config, 'admin', this.options.servers.statuses().find(status => status.name === name))
  }

  /** Removes the admin's server `name` (its session closes, its tools go). */
  async remove(name: string): Promise<void> {
    if (this.options.fileServers.some(config => config.name === name)) throw new McpAdminError(409, `The server "${name}" comes from the config file; remove it there.`)
    const stored = await this.readStored()
    if (!stored.servers.some(entry => entry.name === name)) throw new McpAdminError(404, `There is no server "${name}".`)
    await this.writeStored({ servers: stored.servers.filter(entry => entry.name !== name) })
    await this.sync(true)
  }

  /** Connects to `name` again now (any origin), resolving with its state after the attempt. */
  async reconnect(name: string): Promise<McpServerStatus> {
    const connection = this.options.servers.get(name)
    if (!connection) throw new McpAdminError(404, `There is no running server "${name}".`)
    if (!connection.config.enabled) throw new McpAdminError(409, `The server "${name}" is switched off; switch it on first.`)
    await connection.reconnect()
    return this.options.servers.statuses().find(status => status.name === name)!
  }

  /** Stops following changes (the servers themselves are closed by their owner). */
  close(): void {
    this.closed = true
    clearInterval(this.timer)
  }

  /** Reads the stored set and, when it changed (or `force`), runs the new one. */
  private async sync(force: boolean): Promise<void> {
    const raw = await this.options.settings.getSetting(SETTING)
    if (!force && raw === this.lastStored) return
    this.lastStored = raw
    const stored = parseStored(raw)
    const fileNames = new Set(this.options.fileServers.map(config => config.name))
    this.admin = []
    for (const { name, server } of stored.servers) {
      if (fileNames.has(name) || !MCP_SERVER_NAME.test(name)) continue
      const opened = this.openSecrets(server)
      const parsed = opened ? mcpServerSchema.safeParse(opened) : undefined
      if (parsed?.success) {
        this.admin.push({ config: toMcpServerConfig(name, parsed.data), stored: server })
      } else {
        // Kept in the list (so it can be fixed or removed), not run.
        const problem = opened
          ? 'Its saved settings are no longer valid; edit and save it again.'
          : 'A saved header or environment value could not be decrypted (the server secret changed); enter it again.'
        this.admin.push({ config: fallbackConfig(name, server), stored: server, problem })
      }
    }
    if (this.closed) return
    await this.options.servers.apply([
      ...this.options.fileServers.map(config => ({ config, origin: 'file' as const })),
      ...this.admin.filter(entry => !entry.problem).map(entry => ({ config: entry.config, origin: 'admin' as const })),
    ])
  }

  private async readStored(): Promise<StoredServers> {
    return parseStored(await this.options.settings.getSetting(SETTING))
  }

  private async writeStored(stored: StoredServers): Promise<void> {
    await this.options.settings.setSetting(SETTING, JSON.stringify(stored))
  }

  private sealSecrets(server: Record<string, unknown>): Record<string, unknown> {
    const sealed = { ...server }
    for (const key of ['headers', 'env'] as const) {
      const values = server[key] as Record<string, string> | undefined
      if (values) sealed[key] = Object.fromEntries(Object.entries(values).map(([name, value]) => [name, this.options.secretBox.seal(value)]))
    }
    if (server.oauth && typeof server.oauth === 'object') {
      const oauth = server.oauth as Record<string, unknown>
      sealed.oauth = { ...oauth, ...Object.fromEntries(Object.entries(oauthSecrets(oauth)).map(([name, value]) => [name, this.options.secretBox.seal(value)])) }
    }
    return sealed
  }

  /** The stored server with its secrets opened, or undefined when one cannot be opened. */
  private openSecrets(server: Record<string, unknown>): Record<string, unknown> & { headers?: Record<string, string>, env?: Record<string, string> } | undefined {
    const opened: Record<string, unknown> = { ...server }
    for (const key of ['headers', 'env'] as const) {
      const values = server[key]
      if (!values || typeof values !== 'object') continue
      const plain: Record<string, string> = {}
      for (const [name, sealed] of Object.entries(values as Record<string, unknown>)) {
        const value = typeof sealed === 'string' ? this.options.secretBox.open(sealed) : undefined
        if (value === undefined) return undefined
        plain[name] = value
      }
      opened[key] = plain
    }
    if (server.oauth && typeof server.oauth === 'object') {
      const oauth = { ...server.oauth as Record<string, unknown> }
      for (const [name, sealed] of Object.entries(oauthSecrets(oauth))) {
        const value = this.options.secretBox.open(sealed)
        if (value === undefined) return undefined
        oauth[name] = value
      }
      opened.oauth = oauth
    }
    return opened
  }
}

/** The secret fields of a server's OAuth settings (a pre-registered client's secret, a private key), by name. */
const OAUTH_SECRET_FIELDS = ['clientSecret', 'privateKey'] as const

function oauthSecrets(oauth: unknown): Record<string, string> {
  if (!oauth || typeof oauth !== 'object') return {}
  const fields = oauth as Record<string, unknown>
  return Object.fromEntries(OAUTH_SECRET_FIELDS.flatMap(name => (typeof fields[name] === 'string' ? [[name, fields[name]]] : [])))
}

/** A stored value that no longer parses counts as no servers rather than breaking start-up. */
function parseStored(raw: string | null): StoredServers {
  if (!raw) return { servers: [] }
  try {
    const parsed = storedSchema.safeParse(JSON.parse(raw))
    return parsed.success ? parsed.data : { servers: [] }
  } catch {
    return { servers: [] }
  }
}

/** Whether two settings of a server send their secrets to the same place: the same URL origin, or the same command and arguments. */
function sameTarget(before: Record<string, unknown>, after: Record<string, unknown>): boolean {
  if (typeof before.url === 'string' && typeof after.url === 'string') {
    try {
      return new URL(before.url).origin === new URL(after.url).origin
    } catch {
      return false
    }
  }
  return typeof before.command === 'string' && before.command === after.command && JSON.stringify(before.args ?? []) === JSON.stringify(after.args ?? [])
}

/**
 * Replaces each masked value with the saved one; a mask with nothing saved behind it is an error
 * (`moved`: the server's URL or command changed, so saved values are not carried over).
 */
function keepMaskedSecrets(values: Record<string, string>, saved: Record<string, string> | undefined, what: string, moved = false): Record<string, string> {
  const result: Record<string, string> = {}
  for (const [name, value] of Object.entries(values)) {
    if (value !== MCP_SECRET_MASK) {
      result[name] = value
      continue
    }
    const previous = saved?.[name]
    if (previous === undefined) {
      throw new McpAdminError(400, moved
        ? `The server's address changed, so the saved ${what} ${name} is not sent to the new one; enter its value again.`
        : `The ${what} ${name} has no saved value to keep; enter its value.`)
    }
    result[name] = previous
  }
  return result
}

/** Enough of a server that cannot run to show it in the list. */
function fallbackConfig(name: string, server: Record<string, unknown>): McpServerConfig {
  const text = (value: unknown) => (typeof value === 'string' ? value : '')
  return typeof server.command === 'string'
    ? { name, transport: 'stdio', command: server.command, args: [], env: {}, enabled: false, timeoutMs: 60_000, maxTotalTimeoutMs: 600_000 }
    : { name, transport: 'http', url: text(server.url), headers: {}, enabled: false, timeoutMs: 60_000, maxTotalTimeoutMs: 600_000 }
}

/** A server's settings as the admin page shows them: every secret value masked. */
function settingsView(config: McpServerConfig, origin: McpServerSettings['origin'], status: McpServerStatus | undefined): McpServerSettings {
  // A value that is only a credential placeholder (`Bearer ${credentials:github/token}`) holds no secret: it is shown.
  const mask = (values: Record<string, string>) => Object.fromEntries(Object.entries(values).map(([name, value]) => [name, /^(?:Bearer |token |Basic )?\$\{credentials:[a-z0-9_-]{1,40}\/[a-z0-9_-]{1,40}\}$/.test(value) ? value : MCP_SECRET_MASK]))
  const common = {
    name: config.name,
    origin,
    enabled: config.enabled,
    timeoutMs: config.timeoutMs,
    maxTotalTimeoutMs: config.maxTotalTimeoutMs,
    ...(config.tools ? { tools: config.tools } : {}),
    ...(config.groups ? { groups: config.groups } : {}),
    ...(status ? { status } : {}),
  }
  return config.transport === 'http'
    ? { ...common, url: config.url, headers: mask(config.headers), ...(config.oauth ? { oauth: config.oauth === true ? true : { ...config.oauth, ...Object.fromEntries(Object.keys(oauthSecrets(config.oauth)).map(name => [name, MCP_SECRET_MASK])) } } : {}) }
    : { ...common, command: config.command, args: config.args, env: mask(config.env), ...(config.cwd ? { cwd: config.cwd } : {}) }
}
