/**
 * Sends the browser to identity provider `:provider` to sign in; `?returnTo=/path` is where the app
 * opens after. A provider that is unknown or cannot be reached brings it back to the sign-in page saying so.
 */
export default defineEventHandler(async event => sendRedirect(event, await signInSteps.provider.start(event), 302))
