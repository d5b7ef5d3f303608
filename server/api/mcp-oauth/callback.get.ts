import { z } from 'zod'

const query = z.object({
  state: z.string().max(200).optional(),
  code: z.string().max(4_096).optional(),
  iss: z.string().max(2_048).optional(),
  error: z.string().max(200).optional(),
  error_description: z.string().max(1_000).optional(),
})

/**
 * Where an authorization server sends the browser back after the person approved (or refused):
 * finishes the authorisation they started and returns them to Settings → Connections, saying
 * which server was connected or what went wrong.
 */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event, { optional: true })
  const parsed = query.safeParse(getQuery(event))
  const back = (outcome: Record<string, string>) => sendRedirect(event, `/settings?${new URLSearchParams(outcome)}#connections`, 302)
  if (!user) return back({ connection_error: 'Sign in first, then connect the server again from Settings → Connections.' })
  if (!parsed.success) return back({ connection_error: 'The authorization server sent back something this app cannot read. Start again from Settings → Connections.' })
  try {
    return back({ connected: await useToolSources().authorizations.complete(user.id, parsed.data) })
  } catch (error) {
    return back({ connection_error: error instanceof Error ? error.message.slice(0, 500) : 'The authorisation failed.' })
  }
})
