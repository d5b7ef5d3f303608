/** A workflow's inbound webhook, as its owner sees it (the secret URL is shown once, when made). */
export interface WorkflowWebhookStatus {
  /** Whether the workflow has a webhook. */
  exists: boolean
  createdAt?: number
  /** The header that carries an HMAC-SHA256 signature of the body, when bodies must be signed. */
  signatureHeader?: string
}

/** A webhook just made (or rotated): its secret path, shown this once. */
export interface WorkflowWebhookCreated extends WorkflowWebhookStatus {
  /** The path to POST to (`/api/hooks/workflows/<token>`); the token in it is the secret. */
  path: string
}
