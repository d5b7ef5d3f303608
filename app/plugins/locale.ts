import type { Composer } from 'vue-i18n'
import { setFormatLocale, useAppTranslator, type Translate } from '../utils/i18n'

/** Hands the app's `t` and the chosen language to the code outside components (app/utils/i18n.ts). */
export default defineNuxtPlugin({
  name: 'or3-locale',
  dependsOn: ['i18n:plugin'],
  setup(nuxtApp) {
    const i18n = nuxtApp.$i18n as Composer
    useAppTranslator(i18n.t as Translate)
    setFormatLocale(i18n.locale.value)
    watch(i18n.locale, code => setFormatLocale(code))
  },
})
