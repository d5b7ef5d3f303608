/** Whether dictation is transcribed by the server here (`{ available }`); otherwise the composer uses the browser's own recognition. */
export default defineEventHandler(async (event) => {
  await requireSessionUser(event)
  return voiceFor(event).dictation.available()
})
