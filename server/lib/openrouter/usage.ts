/** Token and cost accounting (`Usage`): an empty sum, and sums of several requests' usage. */
import type { Usage } from './types'

/** Usage of nothing. */
export function emptyUsage(): Usage {
  return { promptTokens: 0, completionTokens: 0, totalTokens: 0, cachedTokens: 0, reasoningTokens: 0, cost: 0 }
}

/** Adds `more` into `total`. */
export function addUsage(total: Usage, more: Usage): void {
  for (const key of Object.keys(total) as Array<keyof Usage>) total[key] += more[key] ?? 0
}

/** The sum of the usages given (undefined when none is). */
export function sumUsage(usages: ReadonlyArray<Usage | undefined>): Usage | undefined {
  const given = usages.filter((usage): usage is Usage => usage !== undefined)
  if (given.length === 0) return undefined
  const total = emptyUsage()
  for (const usage of given) addUsage(total, usage)
  return total
}

/** What steps used together (each may carry a `usage`), e.g. a workflow run's node states; undefined when none did. */
export function usageOfSteps(steps: Readonly<Record<string, { usage?: Usage }>>): Usage | undefined {
  return sumUsage(Object.values(steps).map(step => step.usage))
}
