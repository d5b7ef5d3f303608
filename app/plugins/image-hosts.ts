import { parseOriginList } from '#shared/origin-list'
import { IMAGE_HOSTS } from '../utils/image-hosts'

/** Hands the image allowlist from the runtime config to every rendered answer. */
export default defineNuxtPlugin((nuxtApp) => {
  nuxtApp.vueApp.provide(IMAGE_HOSTS, parseOriginList(useRuntimeConfig().public.imageHosts))
})
