/**
 * A name and password the directory knows (ldap-directory.ts) signed in to the account of that
 * directory person: linked by their entry's stable id on the first sign-in (a new account, named
 * after them, without a local password), their groups kept in step at every sign-in (`group:<cn>`
 * in tool policies, the groups' limits), and, with admin groups set, their role too.
 */
import type { StoredAccount } from '../../stores/accounts/account-store'
import type { IdentityAccounts, IdentityProvider } from '../oidc/identity-accounts'
import type { VerifiedIdentity } from '../oidc/oidc-sign-in'
import type { LdapDirectory } from './ldap-directory'

/** The provider id directory identities are kept under. */
export const DIRECTORY_PROVIDER = 'ldap'

export class DirectorySignIn {
  constructor(private readonly directory: Pick<LdapDirectory, 'verify' | 'adminGroups'>, private readonly identities: Pick<IdentityAccounts, 'signIn'>) {}

  /** The account of the directory's person `name` when `password` is theirs; null when the directory does not know them so. */
  async signIn(name: string, password: string): Promise<StoredAccount | null> {
    const person = await this.directory.verify(name, password)
    if (!person) return null
    const admins = this.directory.adminGroups
    const isAdmin = person.groups.some(group => admins.includes(group.toLowerCase()))
    const provider: IdentityProvider = {
      id: DIRECTORY_PROVIDER,
      name: 'directory',
      groupsClaim: 'groups',
      linkByEmail: false,
      ...(admins.length > 0 ? { roles: { claim: 'role', admin: ['admin'], user: ['user'], required: false } } : {}),
    }
    const identity: VerifiedIdentity = {
      provider: DIRECTORY_PROVIDER,
      subject: person.subject,
      email: person.email,
      // A directory's mail attribute is whatever was typed into it: never taken as verified.
      emailVerified: false,
      displayName: person.name,
      preferredUsername: person.name,
      claimValues: claim => (claim === 'groups' ? person.groups : claim === 'role' ? [isAdmin ? 'admin' : 'user'] : []),
    }
    return this.identities.signIn(provider, identity)
  }
}
