/**
 * vue-i18n's options. This file imports nothing: @nuxtjs/i18n bundles it apart from the app, where
 * neither a relative path nor `#shared` resolves once the app is a layer of another or built
 * elsewhere. The plural rules (shared/plural-rules.ts) fill the empty table below when the app
 * starts (app/plugins/locale.ts).
 */
export default defineI18nConfig(() => ({
  // English (shared/locales.ts, DEFAULT_LOCALE): a key missing from a language falls back to it
  // quietly; tests/unit/i18n fails on a missing key.
  fallbackLocale: 'en',
  missingWarn: false,
  fallbackWarn: false,
  pluralRules: {},
}))
