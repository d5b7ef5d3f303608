import { z } from 'zod'

const body = z.object({ afterPassword: z.boolean().optional() }).strict()

/**
 * The options for the browser to sign in with a passkey: any of this site's (a sign-in by passkey
 * alone), or (`afterPassword`) one of the account whose password was just right, as its second step.
 */
export default defineEventHandler(async (event) => {
  const { afterPassword } = await readJsonBody(event, body)
  return signInSteps.passkey.signInOptions(event, afterPassword === true)
})
