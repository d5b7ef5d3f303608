import type { MemoryView } from '~~/shared/types/memory'

/** Settings → Memory: whether the session user has memory on (and may), and every memory, newest first. */
export default defineEventHandler(async (event): Promise<MemoryView> => {
  const user = await requireSessionUser(event)
  return usePersonal().memory.viewFor(user.id)
})
