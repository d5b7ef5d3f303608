import type { SessionPrincipal } from '../../shared/types/account'

declare module 'h3' {
  interface H3EventContext {
    /** Who this request acts for, once requireSessionUser has resolved it (null: nobody signed in). */
    principal?: SessionPrincipal | null
    /** The identity provider the request's session was signed in through (set with `principal`). */
    sessionVia?: string
    /** The admin requires two-step sign-in of the session's account, which has not set it up (set with `principal`). */
    twoStepPending?: boolean
  }
}

export {}
