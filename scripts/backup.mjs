// `npm run backup -- <directory>`: a consistent backup of the data directory (NUXT_DATA_DIR, else
// .data) while the server runs, made in <directory>/or3-backup-<time>/ (see
// server/lib/stores/sqlite/backup.ts). With OR3_BACKUP_PASSPHRASE set, every file is encrypted
// with it (a passphrase on the command line would show in the process list).
import { readFileSync } from 'node:fs'
import { createJiti } from 'jiti'

const [outDir] = process.argv.slice(2)
if (!outDir || outDir.startsWith('-')) {
  console.error('Usage: npm run backup -- <directory>   (NUXT_DATA_DIR: what to back up, default .data; OR3_BACKUP_PASSPHRASE: encrypt it)')
  process.exit(2)
}
const { backupDataDir, BackupError } = await createJiti(import.meta.url).import('../server/lib/stores/sqlite/backup.ts')
const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
try {
  const { dir, manifest } = await backupDataDir({
    dataDir: process.env.NUXT_DATA_DIR || '.data',
    outDir,
    passphrase: process.env.OR3_BACKUP_PASSPHRASE || undefined,
    app: { name: pkg.name, version: pkg.version },
  })
  console.log(`Backed up schema version ${manifest.schemaVersion} to ${dir}${manifest.encryption ? ' (encrypted)' : ''}:`)
  for (const file of manifest.files) console.log(`  ${file.name}  ${file.bytes} bytes  sha256 ${file.sha256}`)
  if (!manifest.includesSecret) console.log('The server secret is NUXT_SESSION_PASSWORD, not a file: keep it with this backup, or stored credentials cannot be read after a restore.')
} catch (error) {
  console.error(error instanceof BackupError ? error.message : error)
  process.exit(1)
}
