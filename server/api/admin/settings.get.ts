/** The admin's settings: who may sign up, and whether guests are on (config). */
export default defineEventHandler(async (event) => {
  await requireSessionUser(event, { role: 'admin' })
  return { signup: await useAccounts().signupPolicy(), guests: useServerConfig(event).auth.guests }
})
