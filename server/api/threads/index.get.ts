/** The session user's conversations, most recently active first. */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  return { threads: await useThreadStore().listThreads(user.id) }
})
