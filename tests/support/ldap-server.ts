/**
 * A real LDAP directory for the tests: Debian's OpenLDAP `slapd` (installed by .ci/run) started on
 * free ports of 127.0.0.1 with a configuration of its own (plain LDAP with StartTLS, and LDAPS,
 * under a self-signed certificate), filled with people and groups:
 *
 * - `uid=ann` (Ann Lee, ann@example.com) in the groups Admins and Sales (groupOfNames),
 * - `uid=bob` (Bob Stone) in Sales,
 * - `uid=twin` twice (two entries of one uid, in two branches),
 * - the service account `cn=service,dc=example,dc=com`, the only one that may read entries.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from 'ldapts'
import { freePort } from './free-port'

export const DIRECTORY_SUFFIX = 'dc=example,dc=com'
export const SERVICE_DN = `cn=service,${DIRECTORY_SUFFIX}`
export const SERVICE_PASSWORD = 'service-account-password'
export const PEOPLE = { ann: 'anns-directory-password', bob: 'bobs-directory-password' } as const

export interface TestDirectory {
  /** `ldap://127.0.0.1:<port>` (StartTLS offered). */
  url: string
  /** `ldaps://127.0.0.1:<port>`. */
  ldapsUrl: string
  /** The certificate both present (its own authority). */
  caFile: string
  close: () => Promise<void>
}

const ROOT_DN = `cn=admin,${DIRECTORY_SUFFIX}`
const ROOT_PASSWORD = 'directory-root-password'

function configuration(dir: string): string {
  return `include /etc/ldap/schema/core.schema
include /etc/ldap/schema/cosine.schema
include /etc/ldap/schema/inetorgperson.schema
include /etc/ldap/schema/nis.schema
pidfile ${dir}/slapd.pid
modulepath /usr/lib/ldap
moduleload back_mdb
TLSCertificateFile ${dir}/cert.pem
TLSCertificateKeyFile ${dir}/key.pem
database mdb
maxsize 10485760
suffix "${DIRECTORY_SUFFIX}"
rootdn "${ROOT_DN}"
rootpw ${ROOT_PASSWORD}
directory ${dir}/db
access to attrs=userPassword by self write by anonymous auth by * none
access to * by dn.exact="${SERVICE_DN}" read by self read by * none
`
}

async function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}

async function fill(url: string): Promise<void> {
  const client = new Client({ url, timeout: 5_000 })
  await client.bind(ROOT_DN, ROOT_PASSWORD)
  const add = (dn: string, attributes: Record<string, string | string[]>) => client.add(dn, attributes)
  await add(DIRECTORY_SUFFIX, { objectClass: ['dcObject', 'organization'], dc: 'example', o: 'Example' })
  for (const ou of ['people', 'groups', 'contractors']) await add(`ou=${ou},${DIRECTORY_SUFFIX}`, { objectClass: 'organizationalUnit', ou })
  await add(SERVICE_DN, { objectClass: ['organizationalRole', 'simpleSecurityObject'], cn: 'service', userPassword: SERVICE_PASSWORD })
  const person = (uid: string, cn: string, sn: string, password: string, ou = 'people') => add(`uid=${uid},ou=${ou},${DIRECTORY_SUFFIX}`, { objectClass: 'inetOrgPerson', uid, cn, sn, mail: `${uid}@example.com`, userPassword: password })
  await person('ann', 'Ann Lee', 'Lee', PEOPLE.ann)
  await person('bob', 'Bob Stone', 'Stone', PEOPLE.bob)
  await person('twin', 'Twin One', 'One', 'twin-password')
  await person('twin', 'Twin Two', 'Two', 'twin-password', 'contractors')
  const people = (...uids: string[]) => uids.map(uid => `uid=${uid},ou=people,${DIRECTORY_SUFFIX}`)
  await add(`cn=Admins,ou=groups,${DIRECTORY_SUFFIX}`, { objectClass: 'groupOfNames', cn: 'Admins', member: people('ann') })
  await add(`cn=Sales,ou=groups,${DIRECTORY_SUFFIX}`, { objectClass: 'groupOfNames', cn: 'Sales', member: people('ann', 'bob') })
  await client.unbind()
}

/** Starts the directory; fails saying what to install when slapd is not there. */
export async function startTestDirectory(): Promise<TestDirectory> {
  const dir = mkdtempSync(join(tmpdir(), 'or3-slapd-'))
  mkdirSync(join(dir, 'db'))
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'), '-days', '2', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' })
  writeFileSync(join(dir, 'slapd.conf'), configuration(dir))
  const [port, securePort] = [await freePort(), await freePort()]
  let output = ''
  let slapd: ChildProcess
  try {
    slapd = spawn('/usr/sbin/slapd', ['-f', join(dir, 'slapd.conf'), '-h', `ldap://127.0.0.1:${port}/ ldaps://127.0.0.1:${securePort}/`, '-d', '0'], { stdio: ['ignore', 'pipe', 'pipe'] })
  } catch (error) {
    throw new Error(`slapd could not be started (apt-get install slapd): ${(error as Error).message}`)
  }
  slapd.stdout!.on('data', (chunk) => { output += String(chunk) })
  slapd.stderr!.on('data', (chunk) => { output += String(chunk) })
  const exited = new Promise<void>(resolve => slapd.once('exit', () => resolve()))
  let ended = false
  void exited.then(() => { ended = true })
  slapd.once('error', (error) => { output += `\n${error.message} (is slapd installed? apt-get install slapd)` })
  for (let attempt = 0; !(await listening(port)); attempt++) {
    if (ended || attempt > 100) throw new Error(`slapd did not start:\n${output}`)
    await new Promise(resolve => setTimeout(resolve, 50))
  }
  await fill(`ldap://127.0.0.1:${port}`)
  return {
    url: `ldap://127.0.0.1:${port}`,
    ldapsUrl: `ldaps://127.0.0.1:${securePort}`,
    caFile: join(dir, 'cert.pem'),
    async close() {
      slapd.kill('SIGTERM')
      await exited
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
