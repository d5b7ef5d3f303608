import { WORKFLOW_EXAMPLES } from '../../../lib/workflows/examples'

/** The workflows shipped with the app, to install from the workflows page. */
export default defineEventHandler(() => ({
  examples: Object.entries(WORKFLOW_EXAMPLES).map(([key, definition]) => ({ key, name: definition.name, description: definition.description, definition })),
}))
