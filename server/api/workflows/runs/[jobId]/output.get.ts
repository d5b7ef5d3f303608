import { z } from 'zod'

const query = z.object({
  path: z.string().min(1).max(512).startsWith('outputs/', 'must be the path of one of the run\'s kept outputs (outputs/…)'),
  download: z.enum(['1', '0']).optional(),
})

/** Child runs nest at most this deep (the workflow step's depth limit is lower). */
const MAX_PARENTS = 16

/**
 * The whole of a step output the run kept as a file (its record holds the start), for the run's
 * owner: shown as text (`download=0`) or downloaded. A child run's outputs are files of the run it
 * belongs to. Never rendered by the browser as a page: a model wrote it.
 */
export default defineEventHandler(async (event) => {
  const run = await requireOwned(event, 'workflowRun', getRouterParam(event, 'jobId'))
  const parsed = await getValidatedQuery(event, raw => query.safeParse(raw))
  if (!parsed.success) throw createError({ statusCode: 400, statusMessage: 'Invalid query', message: z.prettifyError(parsed.error).replaceAll('\n', ' ') })
  const { path, download } = parsed.data
  let topJobId = run.jobId
  let parent = run.parentRun
  for (let depth = 0; parent && depth < MAX_PARENTS; depth++) {
    topJobId = parent.jobId
    parent = (await useBackgroundJobs().workflowRuns.get(parent.jobId))?.parentRun
  }
  const { workspaces } = useToolSources()
  const file = await workspaces.read(workspaces.forRun(topJobId), path)
  return serveFile(event, { name: `${run.workflowName}-${file.path.slice('outputs/'.length).replaceAll('/', '-')}`, bytes: file.bytes }, { kind: 'written', inline: download === '0' })
})
