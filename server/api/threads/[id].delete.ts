/** Deletes a conversation, stopping any answer still running in it and revoking its share links. */
export default defineEventHandler(async (event) => {
  const thread = await requireOwned(event, 'thread', getRouterParam(event, 'id'))
  const threads = useThreadStore()
  const running = (await threads.listMessages(thread.id)).filter(message => message.status === 'streaming' && message.jobId)
  await Promise.all(running.map(message => useBackgroundJobs().abortJob(message.jobId!)))
  // Its share links go first: none may outlive it, even for a moment.
  await usePersonal().shares.revokeThread(thread.userId, thread.id)
  // Its workspace files before it: a crash between the two leaves a conversation to delete again, never files nobody can reach.
  await useToolSources().workspaces.deleteThreadFiles(thread.id)
  await threads.deleteThread(thread.id)
  return { deleted: true }
})
