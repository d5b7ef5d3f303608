/**
 * The README's configuration table, made from the settings' schema (server-config.ts): one row per
 * setting with its NUXT_* variable, its default and what it means. `npm run docs:config` writes
 * it into the README; tests/unit/readme.test.ts fails when the two differ.
 */
import { z } from 'zod'
import { envVariableFor, serverConfigSchema } from './server-config'

/** One setting as documented. */
export interface SettingDoc {
  path: string[]
  variable: string
  fallback: unknown
  description: string
}

interface JsonSchemaNode {
  type?: string
  default?: unknown
  description?: string
  properties?: Record<string, JsonSchemaNode>
}

/** Every setting, in the schema's order. */
export function settingDocs(): SettingDoc[] {
  const root = z.toJSONSchema(serverConfigSchema, { io: 'input', unrepresentable: 'any' }) as JsonSchemaNode
  const walk = (node: JsonSchemaNode, path: string[]): SettingDoc[] => node.type === 'object' && node.properties
    ? Object.entries(node.properties).flatMap(([key, child]) => walk(child, [...path, key]))
    : [{ path, variable: envVariableFor(path), fallback: node.default, description: node.description ?? '' }]
  return walk(root, [])
}

/** The table's header and separator. */
export const CONFIGURATION_TABLE_HEADER = '| Variable | Default | Meaning |\n|---|---|---|'

/** The configuration table in Markdown, header included. */
export function configurationTable(): string {
  const rows = settingDocs().map(({ variable, fallback, description }) => {
    const shown = fallback === '' ? '*(empty)*' : `\`${String(fallback)}\``
    return `| \`${variable}\` | ${shown} | ${description} |`
  })
  return [CONFIGURATION_TABLE_HEADER, ...rows].join('\n')
}
