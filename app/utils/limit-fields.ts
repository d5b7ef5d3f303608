import type { RoleLimits } from '../../shared/types/limits'

/** Each limit an admin sets (per role, per group): the keys of its name and hint in the locale files (admin.limits.*). */
export const LIMIT_FIELDS: ReadonlyArray<{ key: keyof RoleLimits, label: string, hint: string, step?: string }> = [
  { key: 'models', label: 'models', hint: 'modelsHint' },
  { key: 'jobsAtOnce', label: 'jobsAtOnce', hint: 'perPerson' },
  { key: 'jobStartsPerMinute', label: 'startsPerMinute', hint: 'perPerson' },
  { key: 'dailyTokens', label: 'dailyTokens', hint: 'noBudget' },
  { key: 'dailyCost', label: 'dailyCost', hint: 'noBudget', step: '0.01' },
  { key: 'maxOutputTokens', label: 'maxOutputTokens', hint: 'noLimit' },
  { key: 'workflowModelCalls', label: 'workflowModelCalls', hint: 'workflowModelCallsHint' },
  { key: 'workflowSteps', label: 'workflowSteps', hint: 'workflowStepsHint' },
  { key: 'knowledgeDocuments', label: 'knowledgeDocuments', hint: 'knowledgeOwned' },
  { key: 'knowledgeMegabytes', label: 'knowledgeMegabytes', hint: 'knowledgeOwned' },
  { key: 'knowledgePassages', label: 'knowledgePassages', hint: 'knowledgePassagesHint' },
]

/** The limits a form's fields hold (text from inputs), as the API takes them: only those filled in. */
export function filledLimits(draft: Partial<Record<keyof RoleLimits, string | number>>): Partial<RoleLimits> {
  const changes: Record<string, string | number> = {}
  for (const { key } of LIMIT_FIELDS) {
    // v-model on a number input gives numbers, on a text input strings.
    const value = String(draft[key] ?? '').trim()
    if (value) changes[key] = key === 'models' ? value : Number(value)
  }
  return changes as Partial<RoleLimits>
}
