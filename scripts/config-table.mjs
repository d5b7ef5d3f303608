// Writes the configuration table of docs/configuration.md from the settings' schema
// (server/lib/config/server-config.ts): `npm run docs:config` after adding or changing a setting.
import { readFileSync, writeFileSync } from 'node:fs'
import { createJiti } from 'jiti'

const root = new URL('..', import.meta.url)
const { CONFIGURATION_TABLE_HEADER, configurationTable } = await createJiti(import.meta.url).import('../server/lib/config/settings-docs.ts')
const readmeUrl = new URL('docs/configuration.md', root)
const readme = readFileSync(readmeUrl, 'utf8')
const start = readme.indexOf(CONFIGURATION_TABLE_HEADER)
if (start < 0) throw new Error('docs/configuration.md has no configuration table (its header row) to replace')
const end = readme.indexOf('\n\n', start)
writeFileSync(readmeUrl, readme.slice(0, start) + configurationTable() + readme.slice(end))
console.log('docs/configuration.md: configuration table written')
