import { z } from 'zod'

const bodySchema = z.object({
  target: z.string().min(1).max(2_000),
  /** The credentials the person was shown (`service/key`): 409 when the server asks for more now. */
  credentials: z.array(z.string().max(200)).max(50).optional(),
}).strict()

/** Allows an admin's MCP server the person's own credentials at `target` (and `credentials`), what they were shown (409 when either changed since). */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  const { target, credentials } = await readJsonBody(event, bodySchema)
  return { servers: await useToolSources().allowCredentials(user.id, getRouterParam(event, 'server') ?? '', target, credentials) }
})
