/** OAuth PKCE helpers (RFC 7636) for connecting an OpenRouter account. */

function base64url(bytes: Uint8Array): string {
  let binary = ''
  for (const byte of bytes) binary += String.fromCharCode(byte)
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
}

/** A fresh code verifier (43+ characters of unreserved URL characters). */
export function createCodeVerifier(): string {
  return base64url(crypto.getRandomValues(new Uint8Array(48)))
}

/** The S256 challenge for a verifier. */
export async function codeChallenge(verifier: string): Promise<string> {
  return base64url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))))
}

/** Where to send the user to authorise this app on OpenRouter. */
export function openRouterAuthUrl(callbackUrl: string, challenge: string): string {
  const url = new URL('https://openrouter.ai/auth')
  url.searchParams.set('callback_url', callbackUrl)
  url.searchParams.set('code_challenge', challenge)
  url.searchParams.set('code_challenge_method', 'S256')
  return url.toString()
}
