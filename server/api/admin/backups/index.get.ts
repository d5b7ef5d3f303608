/** The backups made in the backups directory, newest first, with where that is (admins only). */
export default defineEventHandler(async (event) => {
  await requireSessionUser(event, { role: 'admin' })
  const backups = useDataBackups()
  return { dir: backups.dir, backups: await backups.list() }
})
