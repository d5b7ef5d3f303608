/** Deletes a conversation, stopping any answer still running in it. */
export default defineEventHandler(async (event) => {
  const thread = await requireOwnedThread(event, getRouterParam(event, 'id'))
  const store = useThreadStore()
  const running = (await store.listMessages(thread.id)).filter(message => message.status === 'streaming' && message.jobId)
  await Promise.all(running.map(message => useBackgroundJobs().abortJob(message.jobId!)))
  await store.deleteThread(thread.id)
  return { deleted: true }
})
