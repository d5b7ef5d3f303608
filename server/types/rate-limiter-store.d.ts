// rate-limiter-flexible's base class for limiters backed by a store is its extension point for
// new stores, but v11's index does not export it at run time (its types say it does); the class
// is imported from its own file, typed as the declaration the package ships.
declare module 'rate-limiter-flexible/lib/RateLimiterStoreAbstract.js' {
  import type { RateLimiterStoreAbstract } from 'rate-limiter-flexible'

  const StoreAbstract: typeof RateLimiterStoreAbstract
  export default StoreAbstract
}
