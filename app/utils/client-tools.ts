/**
 * Tools this browser runs for a job (the seed's `runtime: 'client'`): each is declared to the server
 * when a message is sent (name, description, argument and result schemas; the server offers it to
 * the model) and run here, in whichever open tab of the same person claims the call first. A tool
 * that reads something private (the position, the clipboard) runs only after the person allows it
 * on its card; the others run at once. Results are small JSON values.
 */
import type { ClientToolDeclaration } from '../../shared/types/tool'

/** A browser tool: its declaration, whether it needs the person's consent, and how it runs. */
export interface ClientTool {
  declaration: ClientToolDeclaration
  /** The locale key of what the card that asks for consent says ("Share your location?"); none: it runs without asking. */
  consent?: string
  run: (args: Record<string, unknown>) => Promise<unknown>
}

const MAX_CLIPBOARD_CHARS = 20_000

function position(precise: boolean): Promise<{ latitude: number, longitude: number, accuracyMeters: number }> {
  return new Promise((resolve, reject) => {
    if (!('geolocation' in navigator)) return reject(new Error('this browser cannot tell its location'))
    navigator.geolocation.getCurrentPosition(
      ({ coords }) => {
        const round = (value: number) => (precise ? value : Math.round(value * 100) / 100)
        resolve({ latitude: round(coords.latitude), longitude: round(coords.longitude), accuracyMeters: Math.round(precise ? coords.accuracy : Math.max(coords.accuracy, 1_000)) })
      },
      error => reject(new Error(error.code === error.PERMISSION_DENIED ? 'the user did not allow location access' : `the location is not available (${error.message})`)),
      { timeout: 20_000, maximumAge: 60_000 },
    )
  })
}

/** Every browser tool, by name. */
export const CLIENT_TOOLS: Record<string, ClientTool> = {
  get_user_location: {
    declaration: {
      name: 'get_user_location',
      description: 'The user\'s current position from their browser (they are asked first). "city" precision rounds it to about 1 km.',
      parameters: { type: 'object', properties: { precision: { type: 'string', enum: ['city', 'exact'], description: 'Default city.' } } },
      resultSchema: { type: 'object', properties: { latitude: { type: 'number' }, longitude: { type: 'number' }, accuracyMeters: { type: 'number' } }, required: ['latitude', 'longitude'] },
    },
    consent: 'clientTools.location',
    run: args => position(args.precision === 'exact'),
  },
  read_clipboard: {
    declaration: {
      name: 'read_clipboard',
      description: 'The text on the user\'s clipboard (they are asked first).',
      parameters: { type: 'object', properties: {} },
      resultSchema: { type: 'object', properties: { text: { type: 'string' }, truncated: { type: 'boolean' } }, required: ['text'] },
    },
    consent: 'clientTools.clipboard',
    run: async () => {
      const text = await navigator.clipboard.readText()
      return { text: text.slice(0, MAX_CLIPBOARD_CHARS), truncated: text.length > MAX_CLIPBOARD_CHARS }
    },
  },
  get_browser_context: {
    declaration: {
      name: 'get_browser_context',
      description: 'The user\'s time zone, local time, preferred languages and colour scheme, from their browser.',
      parameters: { type: 'object', properties: {} },
      resultSchema: { type: 'object', properties: { timeZone: { type: 'string' }, localTime: { type: 'string' }, languages: { type: 'array', items: { type: 'string' } }, colorScheme: { type: 'string' } }, required: ['timeZone'] },
    },
    run: async () => ({
      timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
      localTime: new Date().toString(),
      languages: [...navigator.languages].slice(0, 5),
      colorScheme: matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light',
    }),
  },
}

/** What is sent with a message: the declarations of every browser tool. */
export function clientToolDeclarations(): ClientToolDeclaration[] {
  return Object.values(CLIENT_TOOLS).map(tool => tool.declaration)
}
