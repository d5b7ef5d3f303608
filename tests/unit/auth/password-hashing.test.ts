/** The server's password hashing: nuxt-auth-utils' scrypt PHC strings, its library loaded with the first password. */
import { describe, expect, it } from 'vitest'
import { scryptPasswords } from '../../../server/lib/auth/password-hashing'

/** "correct horse battery" as nuxt-auth-utils' `hashPassword` made it with its default options (before this module). */
const MADE_BY_NUXT_AUTH_UTILS = '$scrypt$n=16384,r=8,p=1$nOgjaLvcWHdkz/AZk13jBQ$99TCUGOaQIM0bVt+WmVJlh7Q+fu3p6se0c7P5/kv2J1hxt+vI9WvCiGcFh6k0Q7Ql/T8IW+2CcFD16LjMWGkpQ'

describe('scryptPasswords', () => {
  it('checks hashes nuxt-auth-utils made, and makes ones in the same form that only the right password matches', async () => {
    const passwords = scryptPasswords()
    expect(await passwords.verify(MADE_BY_NUXT_AUTH_UTILS, 'correct horse battery')).toBe(true)
    expect(await passwords.verify(MADE_BY_NUXT_AUTH_UTILS, 'correct horse battery!')).toBe(false)
    const made = await passwords.hash('another long password')
    expect(made).toMatch(/^\$scrypt\$n=16384,r=8,p=1\$/)
    expect(made).not.toContain('another long password')
    expect(await passwords.verify(made, 'another long password')).toBe(true)
    expect(await passwords.verify(made, 'correct horse battery')).toBe(false)
  })

  it('makes hashes with the options it is given (the runtime config\'s hash.scrypt)', async () => {
    const made = await scryptPasswords({ cost: 1024, blockSize: 8, parallelization: 1 }).hash('a password')
    expect(made).toMatch(/^\$scrypt\$n=1024,r=8,p=1\$/)
    // The parameters travel with the hash: hashing with other options still checks it.
    expect(await scryptPasswords().verify(made, 'a password')).toBe(true)
  })
})
