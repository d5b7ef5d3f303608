/**
 * Encrypts secrets at rest (a user's API key while their job may still need it) with AES-256-GCM
 * under a key derived from the server secret. Sealed text: `v1.<iv>.<tag>.<ciphertext>`
 * (base64url), tamper-evident; a different server secret cannot open it.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto'

/** Seals and opens short secrets. */
export interface SecretBox {
  seal(plaintext: string): string
  /** The plaintext, or undefined when the text was sealed under another secret or was altered. */
  open(sealed: string): string | undefined
}

/** A box whose key is derived from `serverSecret` for `purpose`. */
export function createSecretBox(serverSecret: string, purpose = 'job-api-key'): SecretBox {
  const key = Buffer.from(hkdfSync('sha256', serverSecret, 'or3-chat', `or3:${purpose}`, 32))
  return {
    seal(plaintext) {
      const iv = randomBytes(12)
      const cipher = createCipheriv('aes-256-gcm', key, iv)
      const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()])
      return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ciphertext.toString('base64url')].join('.')
    },
    open(sealed) {
      const [version, iv, tag, ciphertext] = sealed.split('.')
      if (version !== 'v1' || !iv || !tag || ciphertext === undefined) return undefined
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'))
        decipher.setAuthTag(Buffer.from(tag, 'base64url'))
        return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8')
      } catch {
        return undefined
      }
    },
  }
}
