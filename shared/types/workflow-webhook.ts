/** A workflow's inbound webhook, as its owner sees it (the secret URL is shown once, when made). */
export interface WorkflowWebhookStatus {
  /** Whether the workflow has a webhook. */
  exists: boolean
  createdAt?: number
  /**
   * How calls are signed, when they must be: `standard-webhooks` (the Standard Webhooks scheme:
   * `webhook-id`, `webhook-timestamp` and `webhook-signature` over all three), or `hmac-sha256`
   * (an HMAC-SHA256 of the body alone, in hex, in `signatureHeader`: GitHub's form).
   */
  signatureScheme?: WebhookSignatureScheme
  /** The header that carries the signature, when calls must be signed. */
  signatureHeader?: string
}

/** The two ways a webhook's calls may be signed. */
export type WebhookSignatureScheme = 'standard-webhooks' | 'hmac-sha256'

/** A webhook just made (or rotated): its secret path, shown this once. */
export interface WorkflowWebhookCreated extends WorkflowWebhookStatus {
  /** The path to POST to (`/api/hooks/workflows/<token>`); the token in it is the secret. */
  path: string
}
