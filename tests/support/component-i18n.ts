/**
 * The app's English messages in component tests, as the app has them: vue-i18n installed on every
 * mounted component (`$t`, `useI18n()`), and the translator the app's utils use (app/utils/i18n.ts).
 */
import { config } from '@vue/test-utils'
import { createI18n } from 'vue-i18n'
import en from '../../i18n/locales/en.json'
import { setFormatLocale, useAppTranslator, type Translate } from '../../app/utils/i18n'
import { appPluralRules } from '../../shared/plural-rules'

const i18n = createI18n({ legacy: false, locale: 'en', fallbackLocale: 'en', messages: { en }, pluralRules: appPluralRules() })
config.global.plugins.push(i18n)
useAppTranslator(i18n.global.t as Translate)
setFormatLocale('en')
