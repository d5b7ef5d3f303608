import { APP_LOCALE_CODES, DEFAULT_LOCALE } from '../shared/locales'

/** The plural categories in the order a message lists its forms ("one | other", Arabic's six…). */
const CATEGORY_ORDER: Intl.LDMLPluralRule[] = ['zero', 'one', 'two', 'few', 'many', 'other']

/**
 * A message with plural forms lists one form per category the language has, in CATEGORY_ORDER
 * (English "one | other"; Japanese and Chinese one form; Arabic "zero | one | two | few | many |
 * other"), chosen by the language's own rules (Intl.PluralRules) rather than vue-i18n's English one.
 */
function pluralRule(locale: string) {
  const rules = new Intl.PluralRules(locale)
  const categories = CATEGORY_ORDER.filter(category => rules.resolvedOptions().pluralCategories.includes(category))
  return (choice: number, choicesLength: number) => {
    const index = categories.indexOf(rules.select(Math.abs(choice)))
    return Math.min(Math.max(index, 0), choicesLength - 1)
  }
}

export default defineI18nConfig(() => ({
  fallbackLocale: DEFAULT_LOCALE,
  // A key missing from a language falls back to English quietly; the locale-files test fails on it.
  missingWarn: false,
  fallbackWarn: false,
  pluralRules: Object.fromEntries(APP_LOCALE_CODES.map(code => [code, pluralRule(code)])),
}))
