/** One saved workflow. */
export default defineEventHandler(async event => requireOwned(event, 'workflow', getRouterParam(event, 'id')))
