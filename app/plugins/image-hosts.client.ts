import { parseOriginList } from '#shared/origin-list'
import { IMAGE_HOSTS } from '../utils/image-hosts'

/**
 * Hands the image allowlist from the runtime config to every rendered answer. Client-only: the
 * app renders in the browser, and Nuxt's server bundle cannot take a value import from shared/
 * that works both in this app and in an app extending it as a layer.
 */
export default defineNuxtPlugin((nuxtApp) => {
  nuxtApp.vueApp.provide(IMAGE_HOSTS, parseOriginList(useRuntimeConfig().public.imageHosts))
})
