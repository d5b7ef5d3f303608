/**
 * The tools agents wrote for their people (see shared/types/user-tool.ts), kept per person in the
 * shared settings store (one value per tool and an index), so every instance reads the same. A
 * tool is saved by `propose` (new, or a new version of one: either way it needs approval again)
 * and runs only while its approved version is its current one.
 *
 * Every part is bounded: 20 tools a person, 20,000 characters of code, a schema of 20,000
 * characters and 10 levels without `pattern`, `patternProperties` or `format` (their regular
 * expressions would run on arguments the model sends), 5 services.
 */
import { createHash } from 'node:crypto'
import { z } from 'zod'
import type { UserTool } from '../../../../shared/types/user-tool'
import type { SettingsStore } from '../../stores/settings/settings-store'
import { readJsonSetting } from '../../stores/settings/settings-store'
import { KeyedQueue } from '../../stores/settings/keyed-queue'
import { RefusalError } from '../../domain-error'
import { compileArgumentsValidator, releaseArgumentsValidator } from '../tool-schema'
import type { JsonSchemaObject } from '../../openrouter/types'

export const MAX_USER_TOOLS = 20
export const MAX_USER_TOOL_CODE = 20_000
const MAX_SCHEMA_CHARS = 20_000
const MAX_SCHEMA_DEPTH = 10
const REFUSED_SCHEMA_KEYS = new Set(['pattern', 'patternProperties', 'format', '$ref', '$dynamicRef'])

export const userToolInput = z.object({
  name: z.string().regex(/^[a-z][a-z0-9_]{1,40}$/, 'must be 2-41 lowercase letters, digits or _, starting with a letter'),
  description: z.string().trim().min(1).max(1_000),
  parameters: z.record(z.string(), z.unknown()).default({ type: 'object', properties: {} }),
  code: z.string().min(1).max(MAX_USER_TOOL_CODE),
  services: z.array(z.string().regex(/^[a-z0-9_-]{1,40}\/[a-z0-9_-]{1,40}$/, 'must name a credential as service/key, such as github/token')).max(5).default([]),
  network: z.boolean().default(false),
})
export type UserToolInput = z.input<typeof userToolInput>

const indexKey = (userId: string) => `user-tools:${userId}:index`
const toolKey = (userId: string, name: string) => `user-tools:${userId}:tool:${name}`

/** Why a schema is refused, or undefined. */
function schemaProblem(schema: unknown, depth = 0): string | undefined {
  if (depth > MAX_SCHEMA_DEPTH) return `it is nested more than ${MAX_SCHEMA_DEPTH} levels deep`
  if (Array.isArray(schema)) {
    for (const item of schema) {
      const problem = schemaProblem(item, depth + 1)
      if (problem) return problem
    }
    return undefined
  }
  if (typeof schema !== 'object' || schema === null) return undefined
  for (const [key, value] of Object.entries(schema)) {
    if (REFUSED_SCHEMA_KEYS.has(key)) return `"${key}" is not allowed (describe the text in words instead)`
    const problem = schemaProblem(value, depth + 1)
    if (problem) return problem
  }
  return undefined
}

/** The JSON Schema checked: an object schema ajv compiles, within the bounds above. */
function checkedSchema(name: string, parameters: Record<string, unknown>): JsonSchemaObject {
  if (JSON.stringify(parameters).length > MAX_SCHEMA_CHARS) throw new RefusalError(`The parameters schema of ${name} is longer than ${MAX_SCHEMA_CHARS.toLocaleString('en')} characters.`, 400)
  if (parameters.type !== 'object') throw new RefusalError(`The parameters schema of ${name} must describe an object (type "object").`, 400)
  const problem = schemaProblem(parameters)
  if (problem) throw new RefusalError(`The parameters schema of ${name} is refused: ${problem}.`, 400)
  const schema = structuredClone(parameters) as JsonSchemaObject
  try {
    compileArgumentsValidator(`user tool ${name}`, schema)
  } catch (error) {
    throw new RefusalError((error as Error).message, 400)
  } finally {
    releaseArgumentsValidator(schema)
  }
  return schema
}

function versionOf(tool: Pick<UserTool, 'description' | 'parameters' | 'code' | 'services' | 'network'>): string {
  return createHash('sha256').update(JSON.stringify([tool.description, tool.parameters, tool.code, tool.services, tool.network])).digest('base64url').slice(0, 22)
}

export class UserTools {
  private readonly queue = new KeyedQueue()
  /** Tools one person may keep. */
  readonly max = MAX_USER_TOOLS

  constructor(private readonly settings: SettingsStore, private readonly now: () => number = Date.now) {}

  async list(userId: string): Promise<UserTool[]> {
    const names = await readJsonSetting<string[]>(this.settings, indexKey(userId), [])
    const tools = await Promise.all(names.map(name => this.get(userId, name)))
    return tools.filter((tool): tool is UserTool => tool !== null)
  }

  async get(userId: string, name: string): Promise<UserTool | null> {
    return readJsonSetting<UserTool | null>(this.settings, toolKey(userId, name), null)
  }

  /** Saves a new tool, or a new version of one (which needs approval again); returns it as saved. */
  async propose(userId: string, input: UserToolInput): Promise<UserTool> {
    const parsed = userToolInput.safeParse(input)
    if (!parsed.success) throw new RefusalError(`The tool is not valid: ${z.prettifyError(parsed.error).replaceAll('\n', ' ')}`, 400)
    const { name, description, code, services, network } = parsed.data
    const parameters = checkedSchema(name, parsed.data.parameters)
    return this.queue.run(userId, async () => {
      const names = await readJsonSetting<string[]>(this.settings, indexKey(userId), [])
      const existing = await this.get(userId, name)
      if (!existing && names.length >= MAX_USER_TOOLS) throw new RefusalError(`You keep ${MAX_USER_TOOLS} tools, the most one person may. Delete one in Settings → Your tools first.`, 409)
      const version = versionOf({ description, parameters, code, services, network })
      const now = this.now()
      const tool: UserTool = {
        name, description, parameters, code, services, network, version,
        // The approval stays with the version it was given to: the same version again runs, a changed one does not.
        ...(existing?.approvedVersion ? { approvedVersion: existing.approvedVersion } : {}),
        createdAt: existing?.createdAt ?? now,
        updatedAt: now,
      }
      await this.settings.setSetting(toolKey(userId, name), JSON.stringify(tool))
      if (!names.includes(name)) await this.settings.setSetting(indexKey(userId), JSON.stringify([...names, name]))
      return tool
    })
  }

  /** Approves `version` of a tool (refused when the tool changed since the person saw it). */
  async approve(userId: string, name: string, version: string): Promise<UserTool> {
    return this.queue.run(userId, async () => {
      const tool = await this.get(userId, name)
      if (!tool) throw new RefusalError(`You have no tool named ${name}.`, 404)
      if (tool.version !== version) throw new RefusalError(`${name} changed since you looked at it; read its new code and approve that.`, 409)
      const approved = { ...tool, approvedVersion: version }
      await this.settings.setSetting(toolKey(userId, name), JSON.stringify(approved))
      return approved
    })
  }

  /** Takes an approval back: the tool stays, and does not run until approved again. */
  async revoke(userId: string, name: string): Promise<void> {
    await this.queue.run(userId, async () => {
      const tool = await this.get(userId, name)
      if (!tool) throw new RefusalError(`You have no tool named ${name}.`, 404)
      const { approvedVersion: _approved, ...rest } = tool
      await this.settings.setSetting(toolKey(userId, name), JSON.stringify(rest))
    })
  }

  async delete(userId: string, name: string): Promise<void> {
    await this.queue.run(userId, async () => {
      const names = await readJsonSetting<string[]>(this.settings, indexKey(userId), [])
      if (!names.includes(name)) throw new RefusalError(`You have no tool named ${name}.`, 404)
      // No single-key delete in the settings store (and a prefix would take tools whose names start with this one's).
      await this.settings.setSetting(toolKey(userId, name), 'null')
      await this.settings.setSetting(indexKey(userId), JSON.stringify(names.filter(other => other !== name)))
    })
  }

  deleteUser(userId: string): Promise<void> {
    return this.settings.deleteSettings(`user-tools:${userId}:`)
  }
}
