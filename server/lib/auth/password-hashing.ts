/**
 * Password hashes as nuxt-auth-utils makes them: scrypt through `@adonisjs/hash`, kept as PHC
 * strings (the parameters travel with each hash, so a hash made before checks the same), with the
 * options of its runtime config (`hash.scrypt`). The library loads with the first password made or
 * checked, not at every start, where it was about a ninth of a server start's CPU.
 */
import type { Hash } from '@adonisjs/hash'
import type { ScryptConfig } from '@adonisjs/hash/types'
import type { PasswordHasher } from './accounts'

/** Scrypt password hashing with `options`, its library loaded on first use. */
export function scryptPasswords(options: ScryptConfig = {}): PasswordHasher {
  let hasher: Promise<Hash> | undefined
  const loaded = () => hasher ??= Promise.all([import('@adonisjs/hash'), import('@adonisjs/hash/drivers/scrypt')])
    .then(([{ Hash }, { Scrypt }]) => new Hash(new Scrypt(options)))
  return {
    hash: async password => (await loaded()).make(password),
    verify: async (hashed, password) => (await loaded()).verify(hashed, password),
  }
}
