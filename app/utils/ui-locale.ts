import { ar, de, en, es, fr, ja, pt_br, zh_cn } from '@nuxt/ui/locale'
import type { AppLocale } from '#shared/locales'

/** Nuxt UI's own strings (close, search, pagination…) and direction for each of the app's languages. */
export const UI_LOCALES: Record<AppLocale, typeof en> = { 'en': en, 'de': de, 'fr': fr, 'es': es, 'pt-BR': pt_br, 'zh-CN': zh_cn, 'ja': ja, 'ar': ar }
