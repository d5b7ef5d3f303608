/** A one-use invite link for sign-up (admins only); the link is in this answer only. */
export default defineEventHandler(async (event) => {
  const admin = await requireSessionUser(event, { role: 'admin' })
  const invite = await useAccounts().signups.createInvite(admin.id)
  setResponseStatus(event, 201)
  return { ...invite, url: `${getRequestURL(event).origin}/login?invite=${encodeURIComponent(invite.code)}` }
})
