declare module '#or3/api-routes' {
  import type { ApiRoute } from '../lib/http/api-methods'

  /** Every API route file's pattern and methods, listed at build time by modules/api-routes.ts. */
  export const apiRoutes: ApiRoute[]
}
