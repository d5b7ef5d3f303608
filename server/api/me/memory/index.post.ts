import { z } from 'zod'
import { MEMORY_MAX_CHARS, type Memory } from '../../../../shared/types/memory'

const body = z.object({ text: z.string().min(1).max(MEMORY_MAX_CHARS * 2) }).strict()

/** Adds a memory the session user wrote themselves (the same text again is the one already kept). */
export default defineEventHandler(async (event): Promise<Memory> => {
  const user = await requireSessionUser(event)
  const { text } = await readJsonBody(event, body)
  const { memory, added } = await usePersonal().memory.add(user.id, { text, source: 'person' })
  setResponseStatus(event, added ? 201 : 200)
  return memory
})
