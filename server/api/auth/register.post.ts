import { signUpBody } from '../../../shared/schemas/account'

/**
 * Creates an account and signs it in: the admin on first run, then under the admin's sign-up
 * policy (closed: 403; invite: a one-use code; open). 409 when the name is taken. With
 * `keepGuestData` from a guest session, the account keeps that guest's conversations and workflows.
 */
export default defineEventHandler(async (event) => {
  const body = await readJsonBody(event, signUpBody)
  const current = body.keepGuestData ? await requireSessionUser(event, { optional: true }) : null
  const { siteConfigured, loopback } = event.context.site
  const account = await useAccounts().signUp(body.name, body.password, body.invite, current?.role === 'guest' ? current.id : undefined, event.context.clientAddress, { siteConfigured, loopback, setupCode: body.setupCode })
  await setSessionAccount(event, account)
  setResponseStatus(event, 201)
  return { user: { id: account.id, name: account.name, role: account.role } }
})
