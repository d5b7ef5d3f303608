import type { MyPreferences } from '~~/shared/types/personal'

/** The session user's preferences (display name, default model, theme, custom instructions), and the default model their groups give. */
export default defineEventHandler(async (event): Promise<MyPreferences> => {
  const user = await requireSessionUser(event, { twoStepSetup: true })
  const [preferences, team] = await Promise.all([usePersonal().settings.preferences(user.id), useAccounts().groups.chatSettingsOf(user.id)])
  return { ...preferences, ...(team.defaultModel ? { teamDefaultModel: team.defaultModel } : {}) }
})
