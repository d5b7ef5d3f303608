import { signInBody } from '../../../shared/schemas/account'

/**
 * Signs in with a name and password, starting a fresh session; 401 with one message for any
 * mismatch, 429 when attempts run too fast. An account with two-step sign-in gets no session
 * yet: `{ twoStepRequired: true }`, and its code goes to `POST /api/auth/two-step`.
 */
export default defineEventHandler(async (event) => {
  const body = await readJsonBody(event, signInBody)
  const accounts = useAccounts()
  const account = await accounts.signIn(body.name, body.password, event.context.clientAddress)
  if (await accounts.twoStep.isEnabled(account.id)) {
    await signInSteps.secondStep.start(event, account)
    return { twoStepRequired: true }
  }
  await setSessionAccount(event, account)
  return { user: { id: account.id, name: account.name, role: account.role } }
})
