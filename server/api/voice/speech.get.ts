/** Whether answers are read aloud by the server here (`{ available, chars }`: the characters one part may have); otherwise by the browser's own voice. */
export default defineEventHandler(async (event) => {
  await requireSessionUser(event)
  return voiceFor(event).readAloud.available()
})
