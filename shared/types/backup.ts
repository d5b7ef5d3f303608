/** A backup of the data directory as Admin → Backups lists it (`GET /api/admin/backups`). */
export interface BackupSummary {
  /** The backup's directory name, `or3-backup-<time>`. */
  name: string
  createdAt: string
  schemaVersion: number
  appVersion: string
  /** Size of its files before any encryption. */
  bytes: number
  encrypted: boolean
  /** Whether the generated server secret is in it (else it was configured and must be kept apart). */
  includesSecret: boolean
}
