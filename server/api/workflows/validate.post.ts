/** Checks a definition without saving it: `{ ok, problems }` (for the editor's live validation). */
export default defineEventHandler(async (event) => {
  await requireSessionUser(event)
  const body = await readBody<{ definition?: unknown }>(event).catch(() => undefined)
  const result = validateWorkflowDefinition(body?.definition)
  return result.ok ? { ok: true, problems: [] } : { ok: false, problems: result.problems }
})
