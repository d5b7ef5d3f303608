import type { Role } from '../../../../shared/types/account'
import type { AppLocale } from '../../../../shared/locales'

/** Who starts a job, as admission sees them: the user, their role, and the client address. */
export interface JobPrincipal {
  userId: string
  role: Role
  /** The client's address (absent for a job resumed after a restart). */
  ip?: string
  /** The language they read (from the request that starts the job): its notifications are written in it. */
  locale?: AppLocale
}
