/**
 * An HTML artifact of an answer (shared/artifacts.ts) as a page of its own: served from this origin
 * but in a sandbox its response sets (CSP `sandbox allow-scripts`, without `allow-same-origin`), so
 * it runs in an opaque origin: it cannot read the app's cookies or storage, its requests carry no
 * session, it cannot navigate the app's window or open pop-ups, and, unless the person allows it,
 * it reaches no network at all (`default-src 'none'`; inline scripts and styles, data: images and
 * fonts only). Only the app's own pages may frame it: named by origin, since `'self'` means nothing
 * to a page whose origin is opaque.
 */
/** What the page may load with the network allowed: anything over http(s), still in its sandbox. */
const WITH_NETWORK = 'default-src * data: blob: \'unsafe-inline\' \'unsafe-eval\''
/** What it may load without: nothing but itself. */
const WITHOUT_NETWORK = 'default-src \'none\'; script-src \'unsafe-inline\'; style-src \'unsafe-inline\'; img-src data: blob:; font-src data:; media-src data: blob:'

/** The headers of an artifact's page (see the module comment); `appOrigins`: where the app's pages are. */
export function artifactPageHeaders(network: boolean, appOrigins: readonly string[]): Record<string, string> {
  return {
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Security-Policy': `sandbox allow-scripts allow-forms; ${network ? WITH_NETWORK : WITHOUT_NETWORK}; form-action 'none'; base-uri 'none'; frame-ancestors ${[...new Set(appOrigins)].join(' ')}`,
    'X-Frame-Options': 'SAMEORIGIN',
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'Cross-Origin-Opener-Policy': 'same-origin',
    // The app's pages are cross-origin isolated (COEP): a frame they hold must say so too. Credentialless:
    // a page allowed the network loads what others serve without their cookies.
    'Cross-Origin-Embedder-Policy': 'credentialless',
    'Cross-Origin-Resource-Policy': 'same-origin',
    'Cache-Control': 'private, no-store',
  }
}
