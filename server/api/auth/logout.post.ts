import { z } from 'zod'

const bodySchema = z.object({ everywhere: z.boolean().optional() }).strict()

/**
 * Ends this browser's session; with `{ everywhere: true }` every session of the account, on every
 * device. A session signed in through an identity provider that offers sign-out answers its
 * `providerSignOut` URL, which the page opens to end the provider's session too.
 */
export default defineEventHandler(async (event) => {
  const body = await readJsonBody(event, bodySchema, { allowEmpty: true })
  const user = await requireSessionUser(event, { optional: true, twoStepSetup: true })
  const providerSignOut = user && user.role !== 'guest' ? await signInSteps.provider.signOutUrl(event) : undefined
  if (body.everywhere && user && user.role !== 'guest') await useAccounts().endAllSessions(user.id)
  await setSessionAccount(event, null)
  return { signedOut: true, ...(providerSignOut ? { providerSignOut } : {}) }
})
