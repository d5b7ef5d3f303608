/**
 * The operator's files (MCP servers, tool policy, credentials): JSON, or YAML for `.yaml`/`.yml`,
 * read once at start-up. A file that cannot be read or parsed throws a message naming the file,
 * what it is for and the variable that points at it; validating its shape is the caller's.
 */
import { readFileSync } from 'node:fs'
import { extname } from 'node:path'
import { parse as parseYaml } from 'yaml'

/** The parsed content of `path` (an empty file reads as `{}`); throws `makeError(message)` saying what went wrong. */
export function readOperatorFile(path: string, what: { name: string, variable: string }, makeError: (message: string) => Error = message => new Error(message)): unknown {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    throw makeError(`Cannot read the ${what.name} ${path} (${what.variable}): ${(error as Error).message}`)
  }
  const yaml = ['.yaml', '.yml'].includes(extname(path).toLowerCase())
  try {
    // Aliases bounded: a "billion laughs" file cannot blow up start-up.
    return (yaml ? parseYaml(text, { maxAliasCount: 100 }) : JSON.parse(text)) ?? {}
  } catch (error) {
    throw makeError(`The ${what.name} ${path} is not valid ${yaml ? 'YAML' : 'JSON'}: ${(error as Error).message}`)
  }
}
