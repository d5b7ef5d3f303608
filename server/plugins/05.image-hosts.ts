import { parseOriginList } from '../../shared/origin-list'

/**
 * Adds NUXT_PUBLIC_IMAGE_HOSTS to the CSP's `img-src` at start-up (nuxt-security builds the
 * policy from nuxt.config; this setting is read at run time), so the browser enforces the same
 * list the answer renderer uses.
 */
export default defineNitroPlugin((nitroApp) => {
  const hosts = parseOriginList(useServerConfig().public.imageHosts)
  if (hosts.length === 0) return
  nitroApp.hooks.hook('nuxt-security:routeRules', (rules) => {
    const headers = rules['/**']?.headers
    const policy = headers ? headers.contentSecurityPolicy : undefined
    if (policy && typeof policy === 'object') policy['img-src'] = [...(policy['img-src'] as string[] ?? []), ...hosts]
  })
  // nuxt-security announced its rules before this plugin ran: announce them again.
  void nitroApp.hooks.callHook('nuxt-security:ready')
})
