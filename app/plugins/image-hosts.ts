import { IMAGE_HOSTS, parseImageHosts } from '../utils/image-hosts'

/** Hands the image allowlist from the runtime config to every rendered answer. */
export default defineNuxtPlugin((nuxtApp) => {
  nuxtApp.vueApp.provide(IMAGE_HOSTS, parseImageHosts(useRuntimeConfig().public.imageHosts))
})
