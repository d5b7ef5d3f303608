/** The Admin form's sign-in fields for an MCP server and its `oauth` setting, both ways. */
import { describe, expect, it } from 'vitest'
import { oauthSetting, signInForm } from '../../app/utils/mcp-oauth-form'
import { MCP_SECRET_MASK } from '../../shared/types/tool'

describe('the MCP server form\'s sign-in', () => {
  it('turns each choice into the config file\'s oauth shape, with only what was filled in', () => {
    const blank = signInForm(undefined)
    expect(oauthSetting(blank)).toBeUndefined()
    expect(oauthSetting({ ...blank, signIn: 'person' })).toBe(true)
    expect(oauthSetting({ ...blank, signIn: 'person', scope: ' repo read ', clientMetadataUrl: 'https://chat.example.com/api/mcp-oauth/client-metadata.json' }))
      .toEqual({ scope: 'repo read', clientMetadataUrl: 'https://chat.example.com/api/mcp-oauth/client-metadata.json' })
    expect(oauthSetting({ ...blank, signIn: 'app', clientId: 'or3', clientSecret: 's3cret', clientMetadataUrl: 'https://ignored.example/x' }))
      .toEqual({ grant: 'client_credentials', clientId: 'or3', clientSecret: 's3cret' })
  })

  it('reads a saved setting back, sends a masked secret back unchanged, and keeps what the form does not show', () => {
    const saved = { grant: 'client_credentials' as const, clientId: 'or3', clientSecret: MCP_SECRET_MASK, issuer: 'https://login.example.com', privateKey: MCP_SECRET_MASK, signingAlgorithm: 'ES256' }
    const form = signInForm(saved)
    expect(form).toMatchObject({ signIn: 'app', clientId: 'or3', clientSecret: MCP_SECRET_MASK })
    expect(oauthSetting(form)).toEqual(saved)
    // Switched to each person signing in: the app's own private key is not carried over.
    expect(oauthSetting({ ...form, signIn: 'person' })).toEqual({ clientId: 'or3', clientSecret: MCP_SECRET_MASK, issuer: 'https://login.example.com' })
    expect(signInForm(true)).toMatchObject({ signIn: 'person', clientId: '' })
  })
})
