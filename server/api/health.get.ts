import type { HealthReport } from '../../shared/types/health'

/** Whether this server can serve: its store takes writes, jobs are accepted. 200 when so, 503 when not (for load balancers and the README's deployment checks). */
export default defineEventHandler(async (event): Promise<HealthReport> => {
  const { store, jobs } = await useBackgroundJobs().health()
  const ok = store.ok && jobs.accepting
  setResponseStatus(event, ok ? 200 : 503)
  setResponseHeader(event, 'Cache-Control', 'no-store')
  // An MCP server that is down withdraws its tools but does not make this server unhealthy.
  return { status: ok ? 'ok' : 'unavailable', store, jobs, tools: await useToolSources().health() }
})
