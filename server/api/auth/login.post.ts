import { signInBody } from '../../../shared/schemas/account'

/** Signs in with a name and password, starting a fresh session; 401 with one message for any mismatch, 429 when attempts run too fast. */
export default defineEventHandler(async (event) => {
  const body = await readJsonBody(event, signInBody)
  const account = await useAccounts().signIn(body.name, body.password, event.context.clientAddress)
  await setSessionAccount(event, account)
  return { user: { id: account.id, name: account.name, role: account.role } }
})
