/** Saves a new workflow (`{ definition }`); 400 names each problem and its node. */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  const body = await readBody<{ definition?: unknown }>(event).catch(() => undefined)
  const definition = requireValidWorkflow(body?.definition)
  setResponseStatus(event, 201)
  return useWorkflowStore().createWorkflow({ userId: user.id, definition })
})
