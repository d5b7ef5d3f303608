/**
 * A push device's id: from its subscription's endpoint (the same browser subscribing again is the
 * same device), so the server and the browser that holds the subscription name it alike. Web
 * Crypto, which both have.
 */
export async function pushDeviceId(endpoint: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(endpoint)))
  return btoa(String.fromCharCode(...digest)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '').slice(0, 16)
}
