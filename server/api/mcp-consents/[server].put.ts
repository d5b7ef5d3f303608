import { z } from 'zod'

const bodySchema = z.object({ target: z.string().min(1).max(2_000) }).strict()

/** Allows an admin's MCP server the person's own credentials at `target`, the address they were shown (409 when it changed since). */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  const { target } = await readJsonBody(event, bodySchema)
  return { servers: await useToolSources().allowCredentials(user.id, getRouterParam(event, 'server') ?? '', target) }
})
