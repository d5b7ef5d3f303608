/** The models a user can pick, as `GET /api/models` lists them. */

/** A model as the picker shows it. */
export interface ModelSummary {
  id: string
  name: string
  description?: string
  contextLength: number | null
  pricing: { prompt: string, completion: string } | null
  supportsTools: boolean
  /** Whether it takes a reasoning effort (its supported parameters include `reasoning`). */
  supportsReasoning: boolean
  /** Whether it reads images sent with a message (its input modalities include images). */
  acceptsImages: boolean
  /** True for the in-process demo model: no key, no network, not a real language model. */
  offline: boolean
}

/** The answer of `GET /api/models`. */
export interface ModelCatalog {
  models: ModelSummary[]
  /** Where the real models came from; `demo` when only the demo model is on offer. */
  source: 'upstream' | 'demo'
  /** Why the upstream list is missing, in words a person can act on. */
  error?: string
}
