import type { UserToolList } from '~~/shared/types/user-tool'

/** The tools agents wrote for the session user, with their code and whether this version is approved. */
export default defineEventHandler(async (event): Promise<UserToolList> => {
  const user = await requireSessionUser(event)
  const { userTools } = useToolSources()
  const tools = await userTools.list(user.id)
  return { tools: tools.map(tool => ({ ...tool, approved: tool.approvedVersion === tool.version })), max: userTools.max }
})
