/**
 * Sign-in against an LDAP directory or Active Directory with ldapts: the service account looks the
 * person up by the name they typed (escaped into the configured filter, RFC 4515), their groups are
 * read (their `memberOf` DNs, or a group search as the service account), and only then is their
 * own password checked by binding as them. An empty password is refused before anything is sent (a
 * bind without one is an anonymous bind, which a directory accepts). Over TLS the certificate is
 * always checked. A directory that does not answer within the time limit, or refuses the service
 * account, is a 503 saying so, never a hang.
 */
import { readFileSync } from 'node:fs'
import { isIP } from 'node:net'
import type { Client, Entry } from 'ldapts'
import { DomainError, type HttpAnswer } from '../../domain-error'

/** ldapts, loaded with the first directory sign-in (a server without a directory never reads it). */
let ldapts: Promise<typeof import('ldapts')> | undefined
const loadLdapts = () => (ldapts ??= import('ldapts'))

/** The directory settings (config/ldap-settings.ts). */
export interface LdapSettings {
  url: string
  startTls: boolean
  caFile: string
  bindDn: string
  bindPassword: string
  searchBase: string
  searchFilter: string
  nameAttribute: string
  emailAttribute: string
  groupsAttribute: string
  groupSearchBase: string
  groupSearchFilter: string
  adminGroups: string
  timeoutMs: number
}

/** Who the directory says signed in. */
export interface DirectoryPerson {
  /** Stable across renames: the entry's entryUUID or objectGUID, else its DN. */
  subject: string
  dn: string
  name: string
  email: string | null
  /** Their groups' names (each group's first RDN value: its cn). */
  groups: string[]
}

/** The directory could not be asked (down, slow, or refusing the service account): 503, in words for the person. */
export class DirectoryUnavailableError extends DomainError {
  override name = 'DirectoryUnavailableError'
  httpAnswer(): HttpAnswer {
    return { statusCode: 503, statusMessage: 'Directory unavailable', message: this.message }
  }
}

/** Most groups kept of a person. */
const MAX_GROUPS = 200
const MAX_NAME_CHARS = 256
const MAX_PASSWORD_CHARS = 1_024

/** `value` escaped for a filter (RFC 4515): `*`, `(`, `)`, `\` and NUL as `\xx`. */
export function escapeFilterValue(value: string): string {
  let escaped = ''
  for (const character of value) {
    if (character === '*' || character === '(' || character === ')' || character === '\\' || character === '\0') escaped += `\\${character.charCodeAt(0).toString(16).padStart(2, '0')}`
    else escaped += character
  }
  return escaped
}

/** The value of a DN's first RDN (`cn=Sales Team,ou=groups,…` → `Sales Team`), its escapes undone. */
export function firstRdnValue(dn: string): string {
  const start = dn.indexOf('=') + 1
  let value = ''
  for (let index = start; index < dn.length; index++) {
    const character = dn[index]!
    if (character === ',' || character === '+') break
    if (character === '\\' && index + 1 < dn.length) {
      const hex = dn.slice(index + 1, index + 3)
      if (/^[0-9a-fA-F]{2}$/.test(hex)) {
        value += String.fromCharCode(Number.parseInt(hex, 16))
        index += 2
      } else value += dn[++index]
    } else value += character
  }
  return value.trim()
}

const firstText = (value: Entry[string] | undefined): string | null => {
  const first = Array.isArray(value) ? value[0] : value
  return typeof first === 'string' && first !== '' ? first : Buffer.isBuffer(first) ? first.toString('hex') : null
}
const texts = (value: Entry[string] | undefined): string[] => (Array.isArray(value) ? value : value === undefined ? [] : [value]).filter((item): item is string => typeof item === 'string')

export class LdapDirectory {
  private readonly ca: Buffer | undefined

  constructor(private readonly settings: LdapSettings) {
    // A CA file that cannot be read stops start-up here, naming it.
    this.ca = settings.caFile ? readFileSync(settings.caFile) : undefined
  }

  /** The names of the groups whose members are admins (lower-cased). */
  get adminGroups(): string[] {
    return this.settings.adminGroups.split(',').map(name => name.trim().toLowerCase()).filter(Boolean)
  }

  /** The person `name` is in the directory when `password` is theirs; null when it is not (unknown, several, wrong password). */
  async verify(name: string, password: string): Promise<DirectoryPerson | null> {
    if (!name.trim() || !password || name.length > MAX_NAME_CHARS || password.length > MAX_PASSWORD_CHARS) return null
    const { settings } = this
    const { Client, InvalidCredentialsError, ResultCodeError } = await loadLdapts()
    const tlsOptions = () => ({ ...(this.ca ? { ca: this.ca } : {}), rejectUnauthorized: true })
    // TLS options only for ldaps:// (given for ldap://, ldapts speaks TLS at once to a plain port; StartTLS gets its own below).
    const client = new Client({ url: settings.url, timeout: settings.timeoutMs, connectTimeout: settings.timeoutMs, ...(settings.url.startsWith('ldaps:') ? { tlsOptions: tlsOptions() } : {}) })
    try {
      // The certificate is checked against the directory's own name (an upgraded socket knows none of its own).
      const host = new URL(settings.url).hostname.replace(/^\[|\]$/g, '')
      if (settings.startTls) await client.startTLS({ ...tlsOptions(), host, ...(isIP(host) ? {} : { servername: host }) })
      if (settings.bindDn) await this.serviceBind(client)
      const entry = await this.find(client, name.trim())
      if (!entry) return null
      const groups = await this.groupsOf(client, entry)
      try {
        await client.bind(entry.dn, password)
      } catch (error) {
        if (error instanceof InvalidCredentialsError) return null
        throw error
      }
      return {
        subject: firstText(entry.entryUUID) ?? firstText(entry.objectGUID) ?? entry.dn.toLowerCase(),
        dn: entry.dn,
        name: firstText(entry[settings.nameAttribute]) ?? name.trim(),
        email: firstText(entry[settings.emailAttribute])?.toLowerCase() ?? null,
        groups,
      }
    } catch (error) {
      if (error instanceof DirectoryUnavailableError) throw error
      if (error instanceof ResultCodeError) throw new DirectoryUnavailableError(`The directory refused the sign-in (${error.message}). Try again later, or ask the admin of this server.`)
      throw new DirectoryUnavailableError('The directory did not answer. Try again in a moment, or ask the admin of this server.')
    } finally {
      await client.unbind().catch(() => {})
    }
  }

  private async serviceBind(client: Client): Promise<void> {
    const { InvalidCredentialsError } = await loadLdapts()
    try {
      await client.bind(this.settings.bindDn, this.settings.bindPassword)
    } catch (error) {
      if (error instanceof InvalidCredentialsError) throw new DirectoryUnavailableError('The directory refused this server\'s service account. Ask the admin of this server to check NUXT_AUTH_LDAP_BIND_DN and its password.')
      throw error
    }
  }

  /** The one entry the filter finds for `name`, or null (none, or more than one). */
  private async find(client: Client, name: string): Promise<Entry | null> {
    const { SizeLimitExceededError } = await loadLdapts()
    const { settings } = this
    const attributes = [settings.nameAttribute, settings.emailAttribute, 'entryUUID', 'objectGUID', ...(settings.groupsAttribute ? [settings.groupsAttribute] : [])]
    try {
      const { searchEntries } = await client.search(settings.searchBase, {
        scope: 'sub',
        filter: settings.searchFilter.replaceAll('{{username}}', escapeFilterValue(name)),
        attributes,
        sizeLimit: 2,
        explicitBufferAttributes: ['objectGUID'],
      })
      return searchEntries.length === 1 ? searchEntries[0]! : null
    } catch (error) {
      if (error instanceof SizeLimitExceededError) return null
      throw error
    }
  }

  private async groupsOf(client: Client, entry: Entry): Promise<string[]> {
    const { SizeLimitExceededError } = await loadLdapts()
    const { settings } = this
    const dns = settings.groupsAttribute ? texts(entry[settings.groupsAttribute]) : []
    if (settings.groupSearchBase) {
      try {
        const { searchEntries } = await client.search(settings.groupSearchBase, {
          scope: 'sub',
          filter: settings.groupSearchFilter.replaceAll('{{dn}}', escapeFilterValue(entry.dn)),
          attributes: ['cn'],
          sizeLimit: MAX_GROUPS,
        })
        dns.push(...searchEntries.map(group => group.dn))
      } catch (error) {
        // In more groups than are kept: the attribute's are enough to sign in with.
        if (!(error instanceof SizeLimitExceededError)) throw error
      }
    }
    return [...new Set(dns.map(firstRdnValue).filter(Boolean))].slice(0, MAX_GROUPS)
  }
}
