/**
 * The Admin form's sign-in fields for an MCP server and the `oauth` object of its settings, both
 * ways. The form shows the common fields (kind, scope, client ID and secret, metadata URL); the
 * rest of an existing object (an issuer, a private key) is kept as it was, and a masked secret
 * sent back keeps the saved one.
 */
import type { McpOAuthSettingsView } from '../../shared/types/tool'
import { tr } from './i18n'

/** How an HTTP server is signed in to: not at all (or a header), by each person (OAuth), or by the app itself (client credentials). */
export type McpSignIn = 'none' | 'person' | 'app'

export interface McpSignInForm {
  signIn: McpSignIn
  scope: string
  clientId: string
  clientSecret: string
  clientMetadataUrl: string
  /** Settings the form does not show, kept as they were. */
  other: McpOAuthSettingsView
}

export const EMPTY_SIGN_IN: McpSignInForm = { signIn: 'none', scope: '', clientId: '', clientSecret: '', clientMetadataUrl: '', other: {} }

/** The ways a server may sign in, named in the person's language. */
export function signInChoices(): { value: McpSignIn, label: string }[] {
  return (['none', 'person', 'app'] as const).map(value => ({ value, label: tr(`mcpSignIn.${value}`) }))
}

/** The form's fields for a server's saved `oauth` setting. */
export function signInForm(oauth: boolean | McpOAuthSettingsView | undefined): McpSignInForm {
  if (!oauth) return { ...EMPTY_SIGN_IN, other: {} }
  const { scope = '', clientId = '', clientSecret = '', clientMetadataUrl = '', grant, ...other } = oauth === true ? {} : oauth
  return { signIn: grant === 'client_credentials' ? 'app' : 'person', scope, clientId, clientSecret, clientMetadataUrl, other }
}

/** The `oauth` setting the form's fields say (absent: no sign-in; `true`: each person, nothing else given). */
export function oauthSetting(form: McpSignInForm): true | McpOAuthSettingsView | undefined {
  if (form.signIn === 'none') return undefined
  const filled = (value: string) => value.trim() || undefined
  // A private key signs the app's own sign-in only.
  const { privateKey, signingAlgorithm, ...personal } = form.other
  const oauth: McpOAuthSettingsView = {
    ...(form.signIn === 'app' ? { ...personal, privateKey, signingAlgorithm, grant: 'client_credentials' as const } : personal),
    scope: filled(form.scope),
    clientId: filled(form.clientId),
    clientSecret: filled(form.clientSecret),
    clientMetadataUrl: form.signIn === 'person' ? filled(form.clientMetadataUrl) : undefined,
  }
  const given = Object.fromEntries(Object.entries(oauth).filter(([, value]) => value !== undefined)) as McpOAuthSettingsView
  return Object.keys(given).length > 0 ? given : true
}
