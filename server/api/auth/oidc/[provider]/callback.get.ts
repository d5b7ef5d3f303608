/**
 * Where identity provider `:provider` sends the browser back: checked, the account found or made,
 * signed in; anything wrong brings the browser to the sign-in page with the reason.
 */
export default defineEventHandler(async event => sendRedirect(event, await signInSteps.provider.finish(event), 302))
