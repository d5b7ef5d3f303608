/** A fast scrypt password hasher for the account service in unit tests (the app uses nuxt-auth-utils' own). */
import { randomBytes, scryptSync, timingSafeEqual } from 'node:crypto'
import type { PasswordHasher } from '../../server/lib/auth/accounts'

export const testPasswordHasher: PasswordHasher = {
  async hash(password) {
    const salt = randomBytes(8).toString('hex')
    return `${salt}:${scryptSync(password, salt, 16, { N: 1024 }).toString('hex')}`
  },
  async verify(hash, password) {
    const [salt, digest] = hash.split(':') as [string, string]
    return timingSafeEqual(Buffer.from(digest, 'hex'), scryptSync(password, salt, 16, { N: 1024 }))
  },
}
