/** Accounts, roles, sessions and API tokens, as the server stores them and the app shows them. */

/** What a principal may do: `admin` manages users and settings, `user` chats, `guest` chats within guest limits. */
export type Role = 'admin' | 'user' | 'guest'

/** Who may create an account: nobody but the admin (`closed`), anyone (`open`), or holders of an invite link. */
export type SignupPolicy = 'closed' | 'open' | 'invite'

/** A registered account (never carries its password hash). */
export interface Account {
  id: string
  name: string
  role: Exclude<Role, 'guest'>
  disabled: boolean
  createdAt: number
}

/** The principal a request acts for: an account, or a guest session when guests are on. */
export interface SessionPrincipal {
  id: string
  name: string
  role: Role
}

/** A personal API token as listed (its secret is shown once, at creation, and never stored). */
export interface ApiTokenSummary {
  id: string
  name: string
  /** The first characters of the token, so a person can tell tokens apart. */
  prefix: string
  createdAt: number
  lastUsedAt: number | null
}

/** A token just created: the one time its secret is shown. */
export interface CreatedApiToken extends ApiTokenSummary {
  token: string
}

/** An invite link just created: its code is shown once. */
export interface CreatedInvite {
  code: string
  expiresAt: number
}

/** What `GET /api/auth/me` answers: who this is and how the sign-in page should look. */
export interface AuthState {
  user: SessionPrincipal | null
  /** No account exists yet: the first visitor creates the admin account. */
  needsSetup: boolean
  /** Creating it from here needs the setup code the server printed to its log (not this machine, no NUXT_SITE_URL). */
  setupCodeRequired: boolean
  signup: SignupPolicy
  guests: boolean
  /** The field limits the forms show (the server checks the same ones). */
  limits: typeof ACCOUNT_LIMITS
  /** The identity providers to sign in with (a button each). */
  providers: Array<{ id: string, name: string }>
  /** Whether the name-and-password form signs people in (off: only the providers, and the break-glass admin). */
  passwords: boolean
  /** The admin requires two-step sign-in of this account, which has not set it up: that comes first (Settings). */
  twoStepPending?: boolean
}

/** Why a sign-in through an identity provider did not work (`/login?signInError=…`), each with its message on the page. */
export const PROVIDER_SIGN_IN_ERRORS = ['unknown-provider', 'unreachable', 'expired', 'refused', 'invalid', 'not-allowed', 'disabled', 'failed'] as const
export type ProviderSignInError = typeof PROVIDER_SIGN_IN_ERRORS[number]

/** The settings an admin changes at runtime (`GET|PUT /api/admin/settings`, which takes any of them). */
export interface AdminSettings {
  signup: SignupPolicy
  /** Share links open for anyone with them (default false: for this server's signed-in accounts only). */
  publicShareLinks: boolean
  /** Who must use two-step sign-in with their password: nobody (`off`), `admins`, or `everyone`. */
  twoStepRequired: 'off' | 'admins' | 'everyone'
}

/** Limits on account fields, shown by the forms. */
export const ACCOUNT_LIMITS = {
  nameMin: 2,
  nameMax: 64,
  passwordMin: 8,
  passwordMax: 256,
  tokenNameMax: 64,
} as const

/** `GET /api/me/two-step`: whether a second step is asked after the password (an authenticator app's code or a passkey). */
export interface TwoStepStatus {
  enabled: boolean
  /** An authenticator app is set up. */
  app?: boolean
  /** Passkeys the account has (each signs in alone, or is the second step after the password). */
  passkeys?: number
  /** Recovery codes not used yet. */
  recoveryCodesLeft?: number
  enabledAt?: number
}

/** `POST /api/me/two-step/setup`: the secret to add to an authenticator app (as text, and as the `otpauth://` address its QR code holds). */
export interface TwoStepSetup {
  secret: string
  uri: string
}

/** `POST /api/auth/login` when the account has two-step sign-in: the password was right, a code is asked next (`POST /api/auth/two-step`). */
export interface SecondStepNeeded {
  twoStepRequired: true
  /** What may be the second step: a code (from the app, or a recovery code) and/or one of the account's passkeys. */
  methods: Array<'code' | 'passkey'>
}

/** `GET /api/me/passkeys`: one of the account's passkeys, as its owner sees it (never its key). */
export interface PasskeySummary {
  id: string
  name: string
  createdAt: number
  lastUsedAt?: number
  /** Synced between the person's devices (a password manager, iCloud Keychain, Google Password Manager). */
  synced: boolean
}

/** `POST /api/me/passkeys`: the passkey just added, and the recovery codes when it is the account's first second step (shown this once). */
export interface PasskeyAdded {
  passkey: PasskeySummary
  recoveryCodes?: string[]
}
