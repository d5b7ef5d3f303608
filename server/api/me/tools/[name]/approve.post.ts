import { z } from 'zod'

const body = z.object({ version: z.string().min(1).max(64) })

/** Approves the version of one of the session user's tools that they read (refused when it changed since). */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  const parsed = await readValidatedBody(event, raw => body.safeParse(raw))
  if (!parsed.success) throw createError({ statusCode: 400, statusMessage: 'Invalid body', message: 'Send { "version": "…" }: the version of the tool you read.' })
  const tool = await useToolSources().userTools.approve(user.id, getRouterParam(event, 'name') ?? '', parsed.data.version)
  return { name: tool.name, approved: true }
})
