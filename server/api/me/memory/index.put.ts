import { z } from 'zod'
import type { MemoryView } from '~~/shared/types/memory'

const body = z.object({ enabled: z.boolean() }).strict()

/** Turns the session user's memory on or off (off keeps the memories; on is refused where memory cannot be used, saying why). */
export default defineEventHandler(async (event): Promise<MemoryView> => {
  const user = await requireSessionUser(event)
  const { enabled } = await readJsonBody(event, body)
  const { memory } = usePersonal()
  await memory.setEnabled(user.id, enabled)
  return memory.viewFor(user.id)
})
