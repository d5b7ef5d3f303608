/** Reorders the waiting messages (`{ order: [id, …] }`, each once): `{ items }`. */
export default defineEventHandler(async (event) => {
  const thread = await requireOwned(event, 'thread', getRouterParam(event, 'id'))
  return threadQueue(event, thread).reorder()
})
