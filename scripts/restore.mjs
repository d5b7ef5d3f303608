// `npm run restore -- <backup directory>`: restores a backup made by `npm run backup` into the data
// directory (NUXT_DATA_DIR, else .data), which must be empty. Refuses a backup from a newer schema
// and any file whose checksum differs. OR3_BACKUP_PASSPHRASE: the passphrase of an encrypted backup.
import { createJiti } from 'jiti'

const [backupDir] = process.argv.slice(2)
if (!backupDir || backupDir.startsWith('-')) {
  console.error('Usage: npm run restore -- <backup directory>   (NUXT_DATA_DIR: an empty directory to restore into, default .data; OR3_BACKUP_PASSPHRASE: for an encrypted backup)')
  process.exit(2)
}
const { restoreBackup, BackupError } = await createJiti(import.meta.url).import('../server/lib/stores/sqlite/backup.ts')
const dataDir = process.env.NUXT_DATA_DIR || '.data'
try {
  const manifest = await restoreBackup({ backupDir, dataDir, passphrase: process.env.OR3_BACKUP_PASSPHRASE || undefined })
  console.log(`Restored ${manifest.files.map(file => file.name).join(', ')} (schema version ${manifest.schemaVersion}, app ${manifest.app.version}, backed up ${manifest.createdAt}) into ${dataDir}.`)
  console.log('Start the server on it; a newer server upgrades the schema at start-up (after copying it to backups/).')
  if (!manifest.includesSecret) console.log('This backup has no server secret: start the server with the NUXT_SESSION_PASSWORD it ran with, or stored credentials cannot be read.')
} catch (error) {
  console.error(error instanceof BackupError ? error.message : error)
  process.exit(1)
}
