/**
 * People's grants with OAuth-protected MCP servers as the settings store keeps them: one per person
 * and server, sealed (AES-256-GCM through the secret box), so tokens are never stored in plain text;
 * one that does not open or parse reads as none.
 */
import type { SecretBox } from '../../../security/secret-box'
import type { SettingsStore } from '../../../stores/settings/settings-store'
import type { McpOAuthGrant } from './grant'

const SETTING_PREFIX = 'mcp-oauth:'

/** Where `userId`'s grant with `server` is kept (with an empty `server`: the prefix of all of theirs). */
export function grantKey(userId: string, server: string): string {
  return `${SETTING_PREFIX}${userId}:${server}`
}

/** The sealed grants of every person. */
export class SealedGrants {
  constructor(private readonly store: SettingsStore, private readonly secretBox: SecretBox) {}

  async read(userId: string, server: string): Promise<McpOAuthGrant | undefined> {
    const sealed = await this.store.getSetting(grantKey(userId, server))
    if (!sealed) return undefined
    const opened = this.secretBox.open(sealed)
    if (opened === undefined) return undefined
    try {
      return JSON.parse(opened) as McpOAuthGrant
    } catch {
      return undefined
    }
  }

  async write(userId: string, server: string, grant: McpOAuthGrant): Promise<void> {
    await this.store.setSetting(grantKey(userId, server), this.secretBox.seal(JSON.stringify(grant)))
  }

  /** Forgets `userId`'s grant with `server`. */
  async forget(userId: string, server: string): Promise<void> {
    await this.store.setSetting(grantKey(userId, server), '')
  }

  /** Forgets every grant of `userId` (their account is being deleted). */
  async forgetUser(userId: string): Promise<void> {
    await this.store.deleteSettings(grantKey(userId, ''))
  }
}
