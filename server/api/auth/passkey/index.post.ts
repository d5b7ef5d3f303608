import { passkeySignInBody } from '../../../../shared/schemas/account'

/** Signs in with the passkey the browser answered with (to `POST /api/auth/passkey/options`), starting a fresh session. */
export default defineEventHandler(async (event) => {
  const { response } = await readJsonBody(event, passkeySignInBody)
  const account = await signInSteps.passkey.signIn(event, response)
  await setSessionAccount(event, account)
  return { user: { id: account.id, name: account.name, role: account.role } }
})
