/**
 * The languages the app speaks: each has a complete file in i18n/locales/ (checked by
 * tests/unit/i18n/locale-files.test.ts). To add one: a line here, a file there with every key of
 * en.json, and Nuxt UI's own locale for it in app/utils/ui-locale.ts.
 */
export const APP_LOCALES = [
  { code: 'en', language: 'en-US', name: 'English', dir: 'ltr' },
  { code: 'de', language: 'de-DE', name: 'Deutsch', dir: 'ltr' },
  { code: 'fr', language: 'fr-FR', name: 'Français', dir: 'ltr' },
  { code: 'es', language: 'es-ES', name: 'Español', dir: 'ltr' },
  { code: 'pt-BR', language: 'pt-BR', name: 'Português (Brasil)', dir: 'ltr' },
  { code: 'zh-CN', language: 'zh-CN', name: '简体中文', dir: 'ltr' },
  { code: 'ja', language: 'ja-JP', name: '日本語', dir: 'ltr' },
  { code: 'ar', language: 'ar', name: 'العربية', dir: 'rtl' },
] as const

export type AppLocale = typeof APP_LOCALES[number]['code']

export const APP_LOCALE_CODES = APP_LOCALES.map(locale => locale.code) as [AppLocale, ...AppLocale[]]

export const DEFAULT_LOCALE: AppLocale = 'en'

/** The cookie that keeps this browser's language (the person's choice, else the browser's). */
export const LOCALE_COOKIE = 'or3_locale'

export function isAppLocale(value: unknown): value is AppLocale {
  return typeof value === 'string' && (APP_LOCALE_CODES as readonly string[]).includes(value)
}

/** One of the app's languages by its code (its BCP 47 tag, name, direction); English for a code the app does not speak. */
export function appLocaleInfo(code: unknown): typeof APP_LOCALES[number] {
  const known = isAppLocale(code) ? code : DEFAULT_LOCALE
  return APP_LOCALES.find(locale => locale.code === known)!
}

/**
 * The app's language for a language tag a browser sends ("de-AT" → de, "pt" → pt-BR, "zh-Hans-CN"
 * → zh-CN), or undefined when the app does not speak it.
 */
export function matchLocale(tag: string): AppLocale | undefined {
  const wanted = tag.trim().toLowerCase()
  if (!wanted) return undefined
  const exact = APP_LOCALES.find(locale => locale.code.toLowerCase() === wanted || locale.language.toLowerCase() === wanted)
  if (exact) return exact.code
  const primary = wanted.split('-')[0]
  return APP_LOCALES.find(locale => locale.code.toLowerCase().split('-')[0] === primary)?.code
}
