import { signInBody } from '../../../shared/schemas/account'
import type { SecondStepNeeded } from '../../../shared/types/account'

/**
 * Signs in with a name and password, starting a fresh session; 401 with one message for any
 * mismatch, 429 when attempts run too fast. An account with two-step sign-in gets no session
 * yet: `{ twoStepRequired: true, methods }`, and its code goes to `POST /api/auth/two-step` (or
 * its passkey to `POST /api/auth/passkey`).
 */
export default defineEventHandler(async (event) => {
  const body = await readJsonBody(event, signInBody)
  const accounts = useAccounts()
  const account = await accounts.signIn(body.name, body.password, event.context.clientAddress)
  const twoStep = await accounts.twoStep.status(account.id)
  if (twoStep.enabled) {
    await signInSteps.secondStep.start(event, account)
    const needed: SecondStepNeeded = { twoStepRequired: true, methods: twoStep.passkeys ? ['passkey', 'code'] : ['code'] }
    return needed
  }
  await setSessionAccount(event, account)
  return { user: { id: account.id, name: account.name, role: account.role } }
})
