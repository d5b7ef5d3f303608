/**
 * What the server itself says to a person (a refusal, a notification), in their language: the
 * messages of i18n/server/<code>.json, with `{name}` placeholders (numbers written the language's
 * way). English answers keep the precise sentence the code wrote; the other languages get the
 * message for its key. Only the server's own messages are here: the app's are in i18n/locales.
 */
import ar from '../../../i18n/server/ar.json'
import de from '../../../i18n/server/de.json'
import en from '../../../i18n/server/en.json'
import es from '../../../i18n/server/es.json'
import fr from '../../../i18n/server/fr.json'
import ja from '../../../i18n/server/ja.json'
import ptBR from '../../../i18n/server/pt-BR.json'
import zhCN from '../../../i18n/server/zh-CN.json'
import { appLocaleInfo, type AppLocale } from '../../../shared/locales'
import type { LocalizedText } from '../domain-error'

type Messages = { [key: string]: string | Messages }

const MESSAGES: Record<AppLocale, Messages> = { 'en': en, 'de': de, 'fr': fr, 'es': es, 'pt-BR': ptBR, 'zh-CN': zhCN, 'ja': ja, 'ar': ar }

/** The message for `text` in `locale` (English when that language lacks it), placeholders filled. */
export function localize(locale: AppLocale, text: LocalizedText): string {
  const message = lookup(MESSAGES[locale], text.key) ?? lookup(MESSAGES.en, text.key) ?? text.key
  const tag = appLocaleInfo(locale).language
  return message.replace(/\{\s*(\w+)\s*\}/g, (whole, name: string) => {
    const value = text.params?.[name]
    if (value === undefined) return whole
    return typeof value === 'number' ? value.toLocaleString(tag, { maximumFractionDigits: 2 }) : value
  })
}

/** What a person reads for `english` (the code's own sentence) and its `text`: the sentence itself in English, else the message in their language. */
export function inLanguage(locale: AppLocale, english: string, text: LocalizedText | undefined): string {
  return locale === 'en' || !text ? english : localize(locale, text)
}

function lookup(messages: Messages, key: string): string | undefined {
  let node: string | Messages | undefined = messages
  for (const part of key.split('.')) node = typeof node === 'object' ? node[part] : undefined
  return typeof node === 'string' ? node : undefined
}
