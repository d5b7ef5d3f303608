import { APP_LOCALE_CODES } from './locales'

/** The plural categories in the order a message lists its forms ("one | other", Arabic's six…). */
const CATEGORY_ORDER: Intl.LDMLPluralRule[] = ['zero', 'one', 'two', 'few', 'many', 'other']

/**
 * A message with plural forms lists one form per category its language has, in CATEGORY_ORDER
 * (English "one | other"; Japanese and Chinese one form; Arabic "zero | one | two | few | many |
 * other"), chosen by the language's own rules (Intl.PluralRules) rather than vue-i18n's English one.
 */
export function pluralRule(locale: string): (choice: number, choicesLength: number) => number {
  const rules = new Intl.PluralRules(locale)
  const categories = CATEGORY_ORDER.filter(category => rules.resolvedOptions().pluralCategories.includes(category))
  return (choice, choicesLength) => {
    const index = categories.indexOf(rules.select(Math.abs(choice)))
    return Math.min(Math.max(index, 0), choicesLength - 1)
  }
}

/** vue-i18n's `pluralRules` for every language of the app. */
export function appPluralRules(): Record<string, (choice: number, choicesLength: number) => number> {
  return Object.fromEntries(APP_LOCALE_CODES.map(code => [code, pluralRule(code)]))
}
