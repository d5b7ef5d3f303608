/** A workflow run with what it did (its job as last seen), while its live job is kept or after, for the run history's retention. */
export default defineEventHandler(event => requireOwned(event, 'workflowRun', getRouterParam(event, 'jobId')))
