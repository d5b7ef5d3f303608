/**
 * The session user's share links, newest first, each with its full URL, and who may open them
 * (`openToAnyone`: the admin lets people without an account read them; else accounts only).
 */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  const [shares, openToAnyone] = await Promise.all([usePersonal().shares.list(user.id, event.context.site.appOrigin), usePersonal().shares.openToAnyone()])
  return { shares, openToAnyone }
})
