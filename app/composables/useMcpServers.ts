import type { McpOAuthSettingsView, McpServerSettings, McpServerSettingsList, McpServerStatus } from '../../shared/types/tool'

/** What an admin sends to add or change a server: the config file's shape. */
export type McpServerInput =
  | { url: string, headers: Record<string, string>, oauth?: true | McpOAuthSettingsView, enabled: boolean, timeoutMs: number, tools?: string[] }
  | { command: string, args: string[], env: Record<string, string>, cwd?: string, enabled: boolean, timeoutMs: number, tools?: string[] }

/** MCP servers as an admin manages them: the config file's (read-only here) and those added in the UI. */
export function useMcpServers() {
  const list = ref<McpServerSettingsList>({ servers: [], commandsAllowed: false, configFile: null })

  async function refresh(): Promise<void> {
    list.value = await $fetch<McpServerSettingsList>('/api/admin/mcp-servers')
  }

  async function save(name: string, input: McpServerInput): Promise<McpServerSettings> {
    const saved = await $fetch<McpServerSettings>(`/api/admin/mcp-servers/${encodeURIComponent(name)}`, { method: 'PUT', body: input })
    await refresh()
    return saved
  }

  async function remove(name: string): Promise<void> {
    await $fetch(`/api/admin/mcp-servers/${encodeURIComponent(name)}`, { method: 'DELETE' })
    await refresh()
  }

  async function reconnect(name: string): Promise<McpServerStatus> {
    const status = await $fetch<McpServerStatus>(`/api/admin/mcp-servers/${encodeURIComponent(name)}/reconnect`, { method: 'POST' })
    await refresh()
    return status
  }

  return { list, refresh, save, remove, reconnect }
}
