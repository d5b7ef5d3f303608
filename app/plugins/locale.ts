import type { Composer } from 'vue-i18n'
import { appPluralRules } from '#shared/plural-rules'
import { setFormatLocale, useAppTranslator, type Translate } from '../utils/i18n'

/**
 * Gives vue-i18n each language's plural rules (the table i18n/i18n.config.ts leaves empty, read by
 * every translation at the time it runs), and hands the app's `t` and the chosen language to the
 * code outside components (app/utils/i18n.ts).
 */
export default defineNuxtPlugin({
  name: 'or3-locale',
  dependsOn: ['i18n:plugin'],
  setup(nuxtApp) {
    const i18n = nuxtApp.$i18n as Composer
    Object.assign(i18n.pluralRules, appPluralRules())
    useAppTranslator(i18n.t as Translate)
    setFormatLocale(i18n.locale.value)
    watch(i18n.locale, code => setFormatLocale(code))
  },
})
