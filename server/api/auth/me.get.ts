import { ACCOUNT_LIMITS, type AuthState } from '../../../shared/types/account'

/** Who is signed in (null when nobody), whether the first admin is still to be created, and how sign-up works here. */
export default defineEventHandler(async (event): Promise<AuthState> => {
  const user = await requireSessionUser(event, { optional: true, twoStepSetup: true })
  const accounts = useAccounts()
  const [needsSetup, signup] = await Promise.all([accounts.needsSetup(), accounts.signups.policy()])
  const site = event.context.site
  const setupCodeRequired = needsSetup && !site.siteConfigured && !site.loopback
  return { user, needsSetup, setupCodeRequired, signup, guests: useServerConfig(event).auth.guests, limits: ACCOUNT_LIMITS, providers: signInSteps.provider.list(), passwords: accounts.passwordsAllowed, ...(event.context.twoStepPending ? { twoStepPending: true } : {}) }
})
