/**
 * Two-step sign-in: a secret set up and confirmed with a code from the app, codes good once and
 * within a step either side, recovery codes used up, wrong codes counted per account, the secret
 * sealed in the store, two checks of one code at once letting one in.
 */
import { describe, expect, it } from 'vitest'
import { Secret, TOTP } from 'otpauth'
import { TwoStepSignIn } from '../../../server/lib/auth/two-step'
import { createMemoryAccountBackend } from '../../../server/lib/stores/accounts/memory'
import { createSecretBox } from '../../../server/lib/security/secret-box'
import { AuthError } from '../../../server/lib/auth/auth-errors'

function setUp(start = Date.UTC(2026, 10, 28, 12)) {
  const store = createMemoryAccountBackend()
  let now = start
  const clock = { advance: (ms: number) => { now += ms }, now: () => now }
  const options = { issuer: 'OR3 Test', confirmPassword: async (_userId: string, password: string, wrong: string) => { if (password !== 'right') throw new AuthError('wrong-password', wrong) }, passkeysOf: async () => 0, now: clock.now }
  const box = createSecretBox('a-test-server-secret-that-is-long-enough', 'two-step')
  return { store, clock, twoStep: new TwoStepSignIn(store, box, options), another: () => new TwoStepSignIn(store, box, options) }
}
const codeAt = (secret: string, at: number) => new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30, algorithm: 'SHA1' }).generate({ timestamp: at })
const reason = (promise: Promise<unknown>) => promise.then(() => 'accepted', (error: unknown) => (AuthError.isInstance(error) ? error.refusal : String(error)))

describe('two-step sign-in', () => {
  it('is set up from a secret the app reads, and on only once a code from it is given; the secret is sealed in the store', async () => {
    const { store, clock, twoStep } = setUp()
    expect(await twoStep.status('ann')).toMatchObject({ enabled: false, app: false })
    const { secret, uri } = await twoStep.begin('ann', 'Ann')
    expect(uri).toMatch(new RegExp(`^otpauth://totp/OR3%20Test:Ann\\?issuer=OR3%20Test&secret=${secret}&algorithm=SHA1&digits=6&period=30$`))
    expect(await reason(twoStep.confirm('ann', '000000'))).toBe('bad-code')
    expect(await twoStep.isEnabled('ann')).toBe(false)
    const { recoveryCodes } = await twoStep.confirm('ann', codeAt(secret, clock.now()))
    expect(recoveryCodes).toHaveLength(10)
    expect(new Set(recoveryCodes).size).toBe(10)
    for (const code of recoveryCodes) expect(code).toMatch(/^[a-z2-9]{5}-[a-z2-9]{5}$/)
    expect(await twoStep.status('ann')).toMatchObject({ enabled: true, recoveryCodesLeft: 10 })
    const stored = (await store.getSetting('two-step:ann:state'))!
    expect(stored).not.toContain(secret)
    for (const code of recoveryCodes) expect(stored).not.toContain(code)
    expect(await reason(twoStep.begin('ann', 'Ann'))).toBe('two-step-on')
    // A setup left too long is gone.
    const bob = await twoStep.begin('bob', 'Bob')
    clock.advance(16 * 60_000)
    expect(await reason(twoStep.confirm('bob', codeAt(bob.secret, clock.now())))).toBe('two-step-setup')
  })

  it('takes a code once, from this step or one either side, and each recovery code once', async () => {
    const { clock, twoStep } = setUp()
    const { secret } = await twoStep.begin('ann', 'Ann')
    const { recoveryCodes } = await twoStep.confirm('ann', codeAt(secret, clock.now()))
    // The code that confirmed is used.
    expect(await reason(twoStep.check('ann', codeAt(secret, clock.now())))).toBe('bad-code')
    clock.advance(30_000)
    expect(await twoStep.check('ann', codeAt(secret, clock.now()))).toBe('app')
    expect(await reason(twoStep.check('ann', codeAt(secret, clock.now())))).toBe('bad-code')
    // A clock a step ahead is fine; two steps behind is not.
    clock.advance(60_000)
    expect(await twoStep.check('ann', codeAt(secret, clock.now() + 30_000))).toBe('app')
    clock.advance(120_000)
    expect(await reason(twoStep.check('ann', codeAt(secret, clock.now() - 90_000)))).toBe('bad-code')
    // A recovery code, typed with capitals and without its dash, works once.
    expect(await twoStep.check('ann', recoveryCodes[0]!.replace('-', '').toUpperCase())).toBe('recovery')
    expect(await reason(twoStep.check('ann', recoveryCodes[0]!))).toBe('bad-code')
    expect(await twoStep.status('ann')).toMatchObject({ recoveryCodesLeft: 9 })
    // New codes replace the old ones.
    const renewed = await twoStep.renewRecoveryCodes('ann', { code: recoveryCodes[1]! })
    expect(await reason(twoStep.check('ann', recoveryCodes[2]!))).toBe('bad-code')
    expect(await twoStep.check('ann', renewed.recoveryCodes[0]!)).toBe('recovery')
  })

  it('refuses after five wrong codes for an account, whatever is sent then, while another account goes on', async () => {
    const { clock, twoStep } = setUp()
    for (const who of ['ann', 'bob']) {
      const { secret } = await twoStep.begin(who, who)
      await twoStep.confirm(who, codeAt(secret, clock.now()))
    }
    clock.advance(30_000)
    for (let index = 0; index < 5; index++) expect(await reason(twoStep.check('ann', '123456'))).toBe('bad-code')
    expect(await reason(twoStep.check('ann', '123456'))).toBe('too-many-attempts')
    expect(await reason(twoStep.check('bob', '654321'))).toBe('bad-code')
  })

  it('lets in one of two sign-ins with the same code at once, on two instances of one store', async () => {
    const { clock, twoStep, another } = setUp()
    const { secret } = await twoStep.begin('ann', 'Ann')
    await twoStep.confirm('ann', codeAt(secret, clock.now()))
    clock.advance(30_000)
    const code = codeAt(secret, clock.now())
    const outcomes = await Promise.all([reason(twoStep.check('ann', code)), reason(another().check('ann', code))])
    expect(outcomes.sort()).toEqual(['accepted', 'bad-code'])
  })

  it('is turned off only with the password and a code, and goes with the account', async () => {
    const { store, clock, twoStep } = setUp()
    const { secret } = await twoStep.begin('ann', 'Ann')
    const { recoveryCodes } = await twoStep.confirm('ann', codeAt(secret, clock.now()))
    expect(await reason(twoStep.disable('ann', 'wrong', recoveryCodes[0]!))).toBe('wrong-password')
    expect(await reason(twoStep.disable('ann', 'right', '111111'))).toBe('bad-code')
    await twoStep.disable('ann', 'right', recoveryCodes[0]!)
    expect(await twoStep.isEnabled('ann')).toBe(false)
    const again = await twoStep.begin('ann', 'Ann')
    await twoStep.confirm('ann', codeAt(again.secret, clock.now() + 30_000))
    await twoStep.deleteUser('ann')
    expect(await store.getSetting('two-step:ann:state')).toBeNull()
  })
})
