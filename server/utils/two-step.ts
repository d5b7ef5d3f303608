import { getRequestProtocol, useSession, type H3Event } from 'h3'
import { AuthError } from '../lib/auth/auth-errors'
import type { StoredAccount } from '../lib/stores/accounts/account-store'
import { serverSecret } from '../lib/security/session-secret'

/** How long the code may follow the password. */
const SECOND_STEP_S = 5 * 60

/** The sign-in waiting for its code: a sealed cookie of its own, sent only to the sign-in routes. */
function pendingSecondStep(event: H3Event) {
  const config = useServerConfig(event)
  return useSession<{ userId?: string, version?: number }>(event, {
    name: `${config.session.name}-second-step`,
    password: serverSecret(config),
    maxAge: SECOND_STEP_S,
    cookie: { httpOnly: true, sameSite: 'strict', path: '/api/auth', secure: getRequestProtocol(event) === 'https' },
  })
}

/**
 * The second step of a password sign-in, for accounts with two-step sign-in: `start` remembers
 * whose password was right (five minutes, in a sealed cookie; no session yet), `finish` checks
 * their code and answers the account to start a session for (the cookie is used up).
 */
export const secondStep = {
  async start(event: H3Event, account: StoredAccount): Promise<void> {
    const session = await pendingSecondStep(event)
    await session.clear()
    await session.update({ userId: account.id, version: account.sessionVersion })
  },

  async finish(event: H3Event, code: string): Promise<StoredAccount> {
    const session = await pendingSecondStep(event)
    const { userId, version } = session.data
    if (!userId) throw new AuthError('not-signed-in', 'Sign in with your name and password first: the code is asked after them, for five minutes.')
    const accounts = useAccounts()
    await accounts.twoStep.check(userId, code)
    await session.clear()
    const account = await accounts.getAccount(userId)
    // The password changed, the account was disabled or deleted meanwhile: the first step no longer holds.
    if (!account || account.sessionVersion !== version) throw new AuthError('session-ended', 'Your sign-in has ended (the account changed meanwhile). Sign in again.')
    if (account.disabled) throw new AuthError('disabled', 'This account is disabled. Ask the admin of this server.')
    return account
  },
}
