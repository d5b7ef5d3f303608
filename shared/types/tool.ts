/** A tool as `GET /api/tools` lists it: what a model may be offered and what the UI describes. */
export interface ToolSummary {
  name: string
  description: string
  /** JSON Schema of the arguments. */
  parameters: Record<string, unknown>
  /** Where it runs: `server`, `client` (the browser) or `hybrid` (either). */
  runtime: 'client' | 'server' | 'hybrid'
}
