/**
 * Sign-in against an LDAP directory or Active Directory (`auth.ldap.*` of server-config.ts): where
 * it is, the service account that looks people up, how a person and their groups are found, and
 * how long it may take. The sign-in form's name and password go to the directory when no local
 * account with a password matches (auth/ldap/ldap-directory.ts).
 */
import { z } from 'zod'
import { group, setting } from './setting-types'

const template = (placeholder: string) => z.string().trim().max(1_000).refine(value => value === '' || value.includes(placeholder), `must contain ${placeholder}`)

export function ldapSettings() {
  return group({
    url: setting(z.union([z.literal(''), z.string().regex(/^ldaps?:\/\/[^\s/]+\/?$/, 'must be empty (off) or ldap://host[:port] or ldaps://host[:port]')]), '',
      'The directory: `ldaps://dc1.example.com` (TLS) or `ldap://…` (with `…_START_TLS` for TLS on the same port). Empty: no directory sign-in.'),
    startTls: setting(z.boolean(), false,
      'Upgrade an `ldap://` connection to TLS (StartTLS) before anything is sent.'),
    caFile: setting(z.string().trim().max(1_000), '',
      'A PEM file of the certificate authority the directory\'s certificate is checked against (default: the system\'s). Certificates are always checked.'),
    bindDn: setting(z.string().trim().max(1_000), '',
      'The service account that looks people up, e.g. `cn=or3,ou=services,dc=example,dc=com` or `OR3@example.com` for Active Directory. Empty: an anonymous search.'),
    bindPassword: setting(z.string().max(1_000), '',
      'Its password. Never logged.'),
    searchBase: setting(z.string().trim().max(1_000), '',
      'Where people are looked up, e.g. `ou=people,dc=example,dc=com`.'),
    searchFilter: setting(template('{{username}}'), '(uid={{username}})',
      'How a person is found by the name they typed (escaped as RFC 4515 says): `(uid={{username}})` for OpenLDAP, `(sAMAccountName={{username}})` or `(userPrincipalName={{username}})` for Active Directory. Exactly one entry must match.'),
    nameAttribute: setting(z.string().trim().regex(/^[\w-]{1,64}$/, 'must be an attribute name'), 'uid',
      'The attribute a new account is named after (`sAMAccountName` or `displayName` for Active Directory).'),
    emailAttribute: setting(z.string().trim().regex(/^[\w-]{1,64}$/, 'must be an attribute name'), 'mail',
      'The attribute of a person\'s e-mail.'),
    groupsAttribute: setting(z.string().trim().max(64), 'memberOf',
      'The attribute listing a person\'s groups by their DN (Active Directory, OpenLDAP\'s memberof overlay); each group\'s first name (its `cn`) is the group here. Empty with a group search: groups are searched instead.'),
    groupSearchBase: setting(z.string().trim().max(1_000), '',
      'Where groups are searched for a person (groupOfNames and groupOfUniqueNames without a memberOf attribute), e.g. `ou=groups,dc=example,dc=com`. Empty: groups come from `…_GROUPS_ATTRIBUTE` only.'),
    groupSearchFilter: setting(template('{{dn}}'), '(|(member={{dn}})(uniqueMember={{dn}}))',
      'How a person\'s groups are found under `…_GROUP_SEARCH_BASE` (`{{dn}}`: their entry, escaped).'),
    adminGroups: setting(z.string().trim().max(2_000), '',
      'Comma-separated group names whose members are admins (kept in step at every sign-in; the last active admin is kept); others are users. Empty: an account\'s role is left as it is.'),
    timeoutMs: setting(z.number().int().min(500).max(60_000), 5_000,
      'Longest wait for the directory to connect, and for each of its answers; past it the sign-in fails with 503 saying the directory did not answer, and other requests go on.'),
  })
}
