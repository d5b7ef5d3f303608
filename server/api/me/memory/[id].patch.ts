import { z } from 'zod'
import { MEMORY_MAX_CHARS, type Memory } from '../../../../shared/types/memory'

const body = z.object({ text: z.string().min(1).max(MEMORY_MAX_CHARS * 2) }).strict()

/** Changes the text of one of the session user's memories (404 for one that is not theirs or not there). */
export default defineEventHandler(async (event): Promise<Memory> => {
  const user = await requireSessionUser(event)
  const { text } = await readJsonBody(event, body)
  return usePersonal().memory.update(user.id, getRouterParam(event, 'id') ?? '', text)
})
