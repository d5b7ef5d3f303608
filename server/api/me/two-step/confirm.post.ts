import { z } from 'zod'

const body = z.object({ code: z.string().trim().min(1).max(64) }).strict()

/** Turns two-step sign-in on with a code from the app just set up; answers the recovery codes, shown this once. */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event, { twoStepSetup: true })
  const { code } = await readJsonBody(event, body)
  const accounts = useAccounts()
  const confirmed = await accounts.twoStep.confirm(user.id, code)
  // Set up: the admin's requirement no longer holds this account's requests.
  accounts.twoStepPolicy.forget(user.id)
  return confirmed
})
