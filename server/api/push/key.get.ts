/** The server's public VAPID key, which a browser subscribes to pushes with. */
export default defineEventHandler(async (event) => {
  await requireSessionUser(event)
  return { publicKey: await usePersonal().push.publicKey() }
})
