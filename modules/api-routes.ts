import { defineNuxtModule } from 'nuxt/kit'

export const API_ROUTES_VIRTUAL_MODULE = '#or3/api-routes'

/**
 * Lists the API route files Nitro scanned (pattern and method of each) into the virtual module
 * `#or3/api-routes`, so server/middleware/api-methods.ts can answer a wrong method with a 405.
 */
export default defineNuxtModule({
  meta: { name: 'or3-api-routes' },
  setup(_options, nuxt) {
    nuxt.hook('nitro:init', (nitro) => {
      nitro.options.virtual[API_ROUTES_VIRTUAL_MODULE] = () => {
        const methods = new Map<string, Set<string>>()
        for (const handler of nitro.scannedHandlers) {
          if (handler.middleware || !handler.route?.startsWith('/api/') || handler.route.includes('**')) continue
          const set = methods.get(handler.route) ?? new Set<string>()
          set.add(handler.method ? handler.method.toUpperCase() : 'ALL')
          methods.set(handler.route, set)
        }
        const routes = [...methods].map(([route, set]) => ({ route, methods: [...set].sort() }))
        return `export const apiRoutes = ${JSON.stringify(routes)}\n`
      }
    })
  },
})
