import { en } from '@nuxt/ui/locale'
import type { AppLocale } from '#shared/locales'

type UiLocale = typeof en

/**
 * Nuxt UI's own strings (close, search, pagination…) and direction for each of the app's languages.
 * English is in the app's first scripts; another language's are loaded when it is chosen (one small
 * chunk for all of them), so the page weight of an English visit does not grow with each language.
 */
const LOADERS: Record<Exclude<AppLocale, 'en'>, () => Promise<UiLocale>> = {
  'de': () => import('@nuxt/ui/locale').then(({ de }) => de),
  'fr': () => import('@nuxt/ui/locale').then(({ fr }) => fr),
  'es': () => import('@nuxt/ui/locale').then(({ es }) => es),
  'pt-BR': () => import('@nuxt/ui/locale').then(({ pt_br }) => pt_br),
  'zh-CN': () => import('@nuxt/ui/locale').then(({ zh_cn }) => zh_cn),
  'ja': () => import('@nuxt/ui/locale').then(({ ja }) => ja),
  'ar': () => import('@nuxt/ui/locale').then(({ ar }) => ar),
}

export const ENGLISH_UI_LOCALE: UiLocale = en

/** Nuxt UI's locale for `code`. */
export function loadUiLocale(code: AppLocale): Promise<UiLocale> {
  return code === 'en' ? Promise.resolve(en) : LOADERS[code]()
}
