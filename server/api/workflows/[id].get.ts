/** One saved workflow. */
export default defineEventHandler(async event => requireOwnedWorkflow(event, getRouterParam(event, 'id')))
