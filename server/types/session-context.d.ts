import type { SessionPrincipal } from '../../shared/types/account'

declare module 'h3' {
  interface H3EventContext {
    /** Who this request acts for, once requireSessionUser has resolved it (null: nobody signed in). */
    principal?: SessionPrincipal | null
  }
}

export {}
