/** Deletes a conversation, stopping any answer still running in it. */
export default defineEventHandler(async (event) => {
  const thread = await requireOwned(event, 'thread', getRouterParam(event, 'id'))
  const threads = useThreadStore()
  const running = (await threads.listMessages(thread.id)).filter(message => message.status === 'streaming' && message.jobId)
  await Promise.all(running.map(message => useBackgroundJobs().abortJob(message.jobId!)))
  await threads.deleteThread(thread.id)
  return { deleted: true }
})
