/** Forgets every memory of the session user (memory stays on or off as it was). */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  return { deleted: await usePersonal().memory.clear(user.id) }
})
