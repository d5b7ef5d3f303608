/**
 * Makes a backup of the data directory now, while the server runs (SQLite's online backup: a
 * consistent copy, made in steps between which requests are answered); 409 while one is being made.
 * Admins only; an API token of an admin works, for a scheduler.
 */
export default defineEventHandler(async (event) => {
  await requireSessionUser(event, { role: 'admin' })
  setResponseStatus(event, 201)
  return useDataBackups().create()
})
