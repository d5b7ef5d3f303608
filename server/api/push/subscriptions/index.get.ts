/** The devices the person turned notifications on for. */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  return { devices: await usePersonal().push.devices(user.id) }
})
