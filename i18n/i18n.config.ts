import { DEFAULT_LOCALE } from '#shared/locales'
import { appPluralRules } from '#shared/plural-rules'

export default defineI18nConfig(() => ({
  fallbackLocale: DEFAULT_LOCALE,
  // A key missing from a language falls back to English quietly; tests/unit/i18n fails on it.
  missingWarn: false,
  fallbackWarn: false,
  pluralRules: appPluralRules(),
}))
