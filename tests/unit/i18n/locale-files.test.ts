/**
 * Every language the app offers is complete, in the app's messages (i18n/locales) and the server's
 * (i18n/server): its file has exactly English's keys, every message compiles, names the same
 * placeholders, and gives one plural form per plural category its language has (Arabic six,
 * Japanese one). A key missing here would show English in the middle of German.
 */
import { readFileSync } from 'node:fs'
import { baseCompile } from '@intlify/message-compiler'
import { describe, expect, it } from 'vitest'
import { createI18n } from 'vue-i18n'
import { APP_LOCALES } from '../../../shared/locales'
import { appPluralRules } from '../../../shared/plural-rules'

type Messages = { [key: string]: string | string[] | Messages }

function load(code: string, dir: 'locales' | 'server' = 'locales'): Messages {
  return JSON.parse(readFileSync(new URL(`../../../i18n/${dir}/${code}.json`, import.meta.url), 'utf8')) as Messages
}

/** Every message by its dotted key (an array's items by index). */
function flatten(messages: Messages, prefix = ''): Map<string, string> {
  const flat = new Map<string, string>()
  for (const [key, value] of Object.entries(messages)) {
    if (typeof value === 'string') flat.set(`${prefix}${key}`, value)
    else if (Array.isArray(value)) value.forEach((item, index) => flat.set(`${prefix}${key}.${index}`, item))
    else for (const [inner, text] of flatten(value, `${prefix}${key}.`)) flat.set(inner, text)
  }
  return flat
}

const placeholders = (message: string) => new Set([...message.matchAll(/\{\s*([A-Za-z_]\w*)\s*\}/g)].map(match => match[1]))
const forms = (message: string) => message.split(/(?<!\{'?)\|(?!'?\})/).length
const pluralCategories = (code: string) => new Intl.PluralRules(code).resolvedOptions().pluralCategories.length


describe('locale files', () => {
  it('lists each language once, English first, with a direction', () => {
    expect(APP_LOCALES[0]!.code).toBe('en')
    expect(new Set(APP_LOCALES.map(locale => locale.code)).size).toBe(APP_LOCALES.length)
    expect(APP_LOCALES.filter(locale => locale.dir === 'rtl').map(locale => locale.code)).toEqual(['ar'])
  })

  for (const dir of ['locales', 'server'] as const) for (const { code } of APP_LOCALES) {
    describe(`${dir}/${code}`, () => {
      const english = flatten(load('en', dir))
      const messages = flatten(load(code, dir))

      it('has exactly the keys English has', () => {
        expect([...english.keys()].filter(key => !messages.has(key)), 'missing').toEqual([])
        expect([...messages.keys()].filter(key => !english.has(key)), 'not in English').toEqual([])
      })

      it.skipIf(code === 'en')('is translated, not English copied over', () => {
        // Some messages are the same in every language (a unit, a product name, "JSON"); most are not.
        const same = [...messages].filter(([key, message]) => english.get(key) === message && /\p{L}{3,}/u.test(message))
        expect(same.length / messages.size).toBeLessThan(0.12)
      })

      it('compiles every message, with English\'s placeholders and its language\'s plural forms', () => {
        const problems: string[] = []
        for (const [key, message] of messages) {
          const source = english.get(key)
          if (source === undefined) continue
          const errors: string[] = []
          baseCompile(message, { onError: error => errors.push(error.message) })
          if (errors.length) problems.push(`${key}: does not compile (${errors.join('; ')})`)
          if (!message.trim()) problems.push(`${key}: empty`)
          const wanted = placeholders(source)
          const given = placeholders(message)
          const missing = [...wanted].filter(name => !given.has(name) && !(forms(source) > 1 && (name === 'n' || name === 'count')))
          const extra = [...given].filter(name => !wanted.has(name) && !(forms(source) > 1 && (name === 'n' || name === 'count')))
          if (missing.length || extra.length) problems.push(`${key}: placeholders ${[...given].join(',')} instead of ${[...wanted].join(',')}`)
          if (forms(source) > 1 && forms(message) !== pluralCategories(code)) problems.push(`${key}: ${forms(message)} plural forms, ${code} has ${pluralCategories(code)}`)
        }
        expect(problems).toEqual([])
      })
    })
  }

  it('chooses each language\'s plural form by its own rules', () => {
    const messages = Object.fromEntries(APP_LOCALES.map(({ code }) => [code, load(code)]))
    const i18n = createI18n({ legacy: false, locale: 'ar', fallbackLocale: 'en', messages, pluralRules: appPluralRules() })
    const t = i18n.global.t as (key: string, plural: number) => string
    const arabic = ['zero', 'one', 'two', 'few', 'many', 'other']
    const sources = (load('ar').sharedLinks as Messages).messages as string
    const arabicForms = sources.split('|').map(form => form.trim())
    for (const [count, category] of [[0, 'zero'], [1, 'one'], [2, 'two'], [5, 'few'], [11, 'many'], [100, 'other']] as const) {
      expect(t('sharedLinks.messages', count).trim()).toBe(arabicForms[arabic.indexOf(category)]!.replace('{n}', String(count)))
    }
    i18n.global.locale.value = 'en'
    expect(t('sharedLinks.messages', 1)).toBe('1 message')
    expect(t('sharedLinks.messages', 2)).toBe('2 messages')
    i18n.global.locale.value = 'ja'
    expect(t('sharedLinks.messages', 3)).toContain('3')
  })
})
