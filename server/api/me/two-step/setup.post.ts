import type { TwoStepSetup } from '~~/shared/types/account'

/** A new authenticator secret for the session user (in force once confirmed with a code); for accounts that sign in with a password. */
export default defineEventHandler(async (event): Promise<TwoStepSetup> => {
  const user = await requireSessionUser(event, { twoStepSetup: true })
  const accounts = useAccounts()
  const account = await accounts.getAccount(user.id)
  if (!account) throw createError({ statusCode: 403, statusMessage: 'Not allowed', message: 'Two-step sign-in is for accounts: sign up first.' })
  if (!account.passwordHash) throw createError({ statusCode: 409, statusMessage: 'Conflict', message: 'You sign in through your identity provider, which asks for its own second step; two-step sign-in here is for password sign-in.' })
  return accounts.twoStep.begin(user.id, account.name)
})
