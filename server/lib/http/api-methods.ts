/**
 * Which methods an API path answers, from the table of API route files the build lists
 * (modules/api-routes.ts). A request with another method gets a 405 naming the allowed ones,
 * instead of falling through to the app's HTML page with a 200.
 */

/** One API route: its pattern (`/api/jobs/:id`) and the methods its files handle (`ALL`: any). */
export interface ApiRoute {
  route: string
  methods: string[]
}

function matches(pattern: string, path: string): boolean {
  const expected = pattern.split('/')
  const actual = path.split('/')
  if (expected.length !== actual.length) return false
  return expected.every((segment, index) => segment.startsWith(':') ? actual[index] !== '' : segment === actual[index])
}

/**
 * The methods allowed on `path` (HEAD wherever GET is), or undefined when no route has this path
 * or one of its routes takes any method.
 */
export function allowedMethods(routes: readonly ApiRoute[], path: string): string[] | undefined {
  const bare = path.split('?')[0]!.replace(/\/+$/, '') || '/'
  const found = routes.filter(route => matches(route.route, bare))
  if (found.length === 0 || found.some(route => route.methods.includes('ALL'))) return undefined
  const methods = new Set(found.flatMap(route => route.methods))
  if (methods.has('GET')) methods.add('HEAD')
  return [...methods].sort()
}
