/** The admin's settings: who may sign up, whether share links open without an account, and whether guests are on (config). */
export default defineEventHandler(async (event) => {
  await requireSessionUser(event, { role: 'admin' })
  const [signup, publicShareLinks] = await Promise.all([useAccounts().signupPolicy(), usePersonal().shares.openToAnyone()])
  return { signup, publicShareLinks, guests: useServerConfig(event).auth.guests }
})
