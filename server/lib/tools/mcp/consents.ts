/**
 * A person's consent to send their own credentials to an MCP server an admin added in the app.
 * Such a server's headers or environment may name a person's credential (`Bearer
 * ${credentials:github/token}`); without consent an admin could point it at any address and
 * collect everyone's tokens. So a person's values are filled in only after that person allowed
 * that server *at its current address* (Settings → Connections); a changed URL or command asks
 * again. Servers from the operator's config file are the operator's and need no consent.
 */
import type { McpServerConfig } from './config'
import type { McpCredentialConsent } from '../../../../shared/types/credentials'
import type { SettingsStore } from '../../stores/settings/settings-store'

/** The part of the settings store consents live in. */
type ConsentStore = Pick<SettingsStore, 'getSetting' | 'setSetting' | 'deleteSettings'>

/** Where a server sends what it is given: its URL's origin, or its command and arguments. */
export function mcpTarget(config: McpServerConfig): string {
  if (config.transport === 'http') {
    try {
      return new URL(config.url).origin
    } catch {
      return config.url
    }
  }
  return [config.command, ...config.args].join(' ')
}

/** Raised by a call whose person has not allowed the server their credentials; the model is told where to allow it. */
export class McpConsentRequired extends Error {
  override name = 'McpConsentRequired'
  constructor(readonly server: string, readonly target: string, needs: readonly string[]) {
    super(`MCP server "${server}" (added by an admin, at ${target}) would send your ${needs.map(need => `"${need}"`).join(', ')} credential there. Tell the user to allow it in Settings → Connections (/settings#connections) if they trust that address.`)
  }
}

const key = (userId: string, server: string) => `mcp-consent:${userId}:${server}`

/** People's consents, kept in the account store's settings. */
export class McpCredentialConsents {
  constructor(private readonly store: ConsentStore) {}

  /** Whether `userId` allowed `server` at `target`. */
  async allowed(userId: string, server: string, target: string): Promise<boolean> {
    return (await this.store.getSetting(key(userId, server))) === target
  }

  async allow(userId: string, server: string, target: string): Promise<void> {
    await this.store.setSetting(key(userId, server), target)
  }

  async withdraw(userId: string, server: string): Promise<void> {
    // Emptied, not deleted: deleting by prefix would take "server2" with "server".
    await this.store.setSetting(key(userId, server), '')
  }

  /** Forgets every consent of `userId` (their account is deleted). */
  async deleteUser(userId: string): Promise<void> {
    await this.store.deleteSettings(`mcp-consent:${userId}:`)
  }

  /** Where `userId` stands with each of `servers` (those that would take their credentials). */
  async list(userId: string, servers: ReadonlyArray<{ name: string, target: string, needs: string[] }>): Promise<McpCredentialConsent[]> {
    return Promise.all(servers.map(async server => ({ server: server.name, target: server.target, credentials: server.needs, allowed: await this.allowed(userId, server.name, server.target) })))
  }
}
