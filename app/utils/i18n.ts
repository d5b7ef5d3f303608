import { getCurrentInstance, ref } from 'vue'
import { appLocaleInfo } from '#shared/locales'

/**
 * The app's messages and formats for code outside a component (the utils that build labels, the
 * notifications): `tr` is the app's vue-i18n `t`, and the formatters below read the language
 * chosen. Called while a component renders, both take the app of that component (on the server,
 * the request's own: a page rendered for one person in German never borrows another's French);
 * elsewhere (a toast from a callback, in the browser) the app's, handed over by
 * app/plugins/locale.ts. Components use `$t` / `useI18n()` themselves.
 */
export type Translate = {
  (key: string, named?: Record<string, unknown>): string
  (key: string, plural: number, options?: { named?: Record<string, unknown> }): string
  (key: string, named: Record<string, unknown>, plural: number): string
}

let translator: Translate = ((key: string) => key) as Translate

/** The vue-i18n of the component being set up or rendered, if any. */
function renderingI18n(): { $t?: Translate, $i18n?: { locale: string | { value: string } } } | undefined {
  return getCurrentInstance()?.appContext.config.globalProperties as { $t?: Translate, $i18n?: { locale: string | { value: string } } } | undefined
}

export const tr: Translate = ((...args: Parameters<Translate>) => ((renderingI18n()?.$t ?? translator) as (...a: unknown[]) => string)(...args)) as Translate

/** The BCP 47 tag of the language chosen (what Intl formats with); reactive, so a template re-renders on a change. */
export const formatLocale = ref<string>('en-US')

/** Called by the locale plugin: the app's `t`, and the language now chosen. */
export function useAppTranslator(t: Translate): void {
  translator = t
}
export function setFormatLocale(code: string): void {
  formatLocale.value = appLocaleInfo(code).language
}

/** The language dates and numbers are written in now: the rendering app's, else the browser app's. */
export function currentTag(): string {
  const chosen = renderingI18n()?.$i18n?.locale
  const code = typeof chosen === 'object' ? chosen.value : chosen
  return code ? appLocaleInfo(code).language : formatLocale.value
}

/** A date and time as people read it in their language ("27 Nov 2026, 14:05"). */
export function formatDateTime(at: number | string | Date, options: Intl.DateTimeFormatOptions = { dateStyle: 'medium', timeStyle: 'short' }): string {
  return new Date(at).toLocaleString(currentTag(), options)
}
export function formatDate(at: number | string | Date, options: Intl.DateTimeFormatOptions = { dateStyle: 'medium' }): string {
  return new Date(at).toLocaleDateString(currentTag(), options)
}
export function formatTime(at: number | string | Date, options: Intl.DateTimeFormatOptions = { hour: '2-digit', minute: '2-digit' }): string {
  return new Date(at).toLocaleTimeString(currentTag(), options)
}
export function formatNumber(value: number, options?: Intl.NumberFormatOptions): string {
  return value.toLocaleString(currentTag(), options)
}
/** A size as people read it ("1.5 MB", "1,5 Mo"): the number in the language's digits, the unit its word. */
export function fileSize(bytes: number): string {
  if (bytes >= 1024 * 1024) return tr('units.megabytes', { n: formatNumber(bytes / 1024 / 1024, { maximumFractionDigits: 1, minimumFractionDigits: 1 }) })
  if (bytes >= 1024) return tr('units.kilobytes', { n: formatNumber(Math.round(bytes / 1024)) })
  return tr('units.bytes', { n: formatNumber(bytes) })
}
