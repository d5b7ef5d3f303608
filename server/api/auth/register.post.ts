import { signUpBody } from '../../../shared/schemas/account'

/**
 * Creates an account and signs it in: the admin on first run, then under the admin's sign-up
 * policy (closed: 403; invite: a one-use code; open). 409 when the name is taken.
 */
export default defineEventHandler(async (event) => {
  const body = await readJsonBody(event, signUpBody)
  const account = await useAccounts().signUp(body.name, body.password, body.invite)
  await setSessionAccount(event, account)
  setResponseStatus(event, 201)
  return { user: { id: account.id, name: account.name, role: account.role } }
})
