#!/usr/bin/env node
// Regenerates convex/_generated/ without a deployment or network (`npx convex codegen` needs
// both). Uses Convex's own code generation templates, so the output matches what the CLI writes.
// Run: npm run convex:codegen   (`--check`: exit 1 if the committed files are out of date)
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'

// The templates are not in convex's package exports; load them by file path.
const convexPackage = resolve(createRequire(import.meta.url).resolve('convex/package.json'), '..')
const template = name => import(pathToFileURL(join(convexPackage, 'dist/esm/cli/codegen_templates', name)).href)
const { apiCodegen } = await template('api.js')
const { serverCodegen } = await template('server.js')

const convexDir = resolve(fileURLToPath(new URL('../convex', import.meta.url)))
const outDir = join(convexDir, '_generated')

/** Function modules, as the Convex CLI picks them: .ts/.js files outside _generated, not tests or the schema. */
function modules(directory) {
  return readdirSync(directory).flatMap((name) => {
    const path = join(directory, name)
    if (statSync(path).isDirectory()) return name === '_generated' || name === 'node_modules' ? [] : modules(path)
    if (!/\.(ts|js)$/.test(name) || name.endsWith('.d.ts') || /\.test\.(ts|js)$/.test(name)) return []
    if (['schema.ts', 'tsconfig.json'].includes(name) || name.includes('.config.')) return []
    return [relative(convexDir, path).replaceAll('\\', '/')]
  }).sort()
}

const header = `/* eslint-disable */
/**
 * Generated data model types.
 *
 * THIS CODE IS AUTOMATICALLY GENERATED (npm run convex:codegen).
 * @module
 */
`
const dataModel = `${header}
import type { DataModelFromSchemaDefinition, DocumentByName, TableNamesInDataModel, SystemTableNames } from 'convex/server'
import type { GenericId } from 'convex/values'
import schema from '../schema.js'

/** The names of all of your Convex tables. */
export type TableNames = TableNamesInDataModel<DataModel>

/** The type of a document stored in Convex. */
export type Doc<TableName extends TableNames> = DocumentByName<DataModel, TableName>

/** An identifier for a document in Convex. */
export type Id<TableName extends TableNames | SystemTableNames> = GenericId<TableName>

/** A type describing your Convex data model. */
export type DataModel = DataModelFromSchemaDefinition<typeof schema>
`

const api = apiCodegen(modules(convexDir), { useTypeScript: false })
const server = serverCodegen({ useTypeScript: false })
const files = {
  'api.d.ts': api.DTS,
  'api.js': api.JS,
  'server.d.ts': server.DTS,
  'server.js': server.JS,
  'dataModel.d.ts': dataModel,
}

if (process.argv.includes('--check')) {
  const stale = Object.entries(files).filter(([name, text]) => {
    const path = join(outDir, name)
    return !existsSync(path) || readFileSync(path, 'utf8') !== text
  }).map(([name]) => name)
  if (stale.length > 0) {
    console.error(`convex/_generated is out of date (${stale.join(', ')}); run npm run convex:codegen and commit the result.`)
    process.exit(1)
  }
  console.log('convex/_generated is up to date')
} else {
  mkdirSync(outDir, { recursive: true })
  for (const [name, text] of Object.entries(files)) writeFileSync(join(outDir, name), text)
  console.log(`convex/_generated: ${modules(convexDir).length} modules`)
}
