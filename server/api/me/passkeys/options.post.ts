/**
 * The options for the browser to make a new passkey for the session user (answered to
 * `POST /api/me/passkeys` within five minutes); for accounts that sign in with a password.
 */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event, { twoStepSetup: true })
  const account = await useAccounts().getAccount(user.id)
  if (!account) throw createError({ statusCode: 403, statusMessage: 'Not allowed', message: 'Passkeys are for accounts: sign up first.' })
  if (!account.passwordHash) throw createError({ statusCode: 409, statusMessage: 'Conflict', message: 'You sign in through your identity provider, which has its own passkeys; passkeys here are for accounts with a password.' })
  return signInSteps.passkey.registrationOptions(event, user.id, account.name)
})
