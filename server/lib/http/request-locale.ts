import { getCookie, type H3Event } from 'h3'
import { getHeaderLanguages } from '@intlify/utils/h3'
import { DEFAULT_LOCALE, isAppLocale, LOCALE_COOKIE, matchLocale, type AppLocale } from '../../../shared/locales'

/** At most this many of a request's Accept-Language entries are tried (the header is the client's). */
const MAX_LANGUAGES = 10

/**
 * The language a request's answers are written in: the app's cookie (the person's choice, kept by
 * the app), else the first of the browser's languages the app speaks, else English.
 */
export function requestLocale(event: H3Event): AppLocale {
  const chosen = getCookie(event, LOCALE_COOKIE)
  if (isAppLocale(chosen)) return chosen
  for (const tag of getHeaderLanguages(event).slice(0, MAX_LANGUAGES)) {
    const known = matchLocale(tag)
    if (known) return known
  }
  return DEFAULT_LOCALE
}
