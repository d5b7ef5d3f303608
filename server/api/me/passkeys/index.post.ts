import { passkeyRegistrationBody } from '../../../../shared/schemas/account'
import type { PasskeyAdded } from '~~/shared/types/account'

/** Keeps the passkey the browser just made; the account's first second step answers its recovery codes (shown this once). */
export default defineEventHandler(async (event): Promise<PasskeyAdded> => {
  const user = await requireSessionUser(event, { twoStepSetup: true })
  const { response, name } = await readJsonBody(event, passkeyRegistrationBody)
  const accounts = useAccounts()
  const added = await signInSteps.passkey.register(event, user.id, response, name)
  // A second step now: the admin's requirement no longer holds this account's requests.
  accounts.twoStepPolicy.forget(user.id)
  return added
})
