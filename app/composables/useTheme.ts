import { ref } from 'vue'

/** `system` follows the device; `light` and `dark` are the person's pick, kept in this browser. */
export type ThemeChoice = 'system' | 'light' | 'dark'

const THEME_KEY = 'or3:theme'
const ORDER: ThemeChoice[] = ['system', 'light', 'dark']
const choice = ref<ThemeChoice>('system')

/** Whether the page is dark: the person's pick, else the device's. */
function isDark(value: ThemeChoice): boolean {
  return value === 'dark' || (value === 'system' && typeof matchMedia === 'function' && matchMedia('(prefers-color-scheme: dark)').matches)
}

function apply(value: ThemeChoice): void {
  if (typeof document === 'undefined') return
  const root = document.documentElement
  if (value === 'system') root.removeAttribute('data-theme')
  else root.setAttribute('data-theme', value)
  // Nuxt UI's components read the `dark` class.
  root.classList.toggle('dark', isDark(value))
  root.classList.toggle('light', !isDark(value))
}

/** Light, dark or the system's: the toggle in the sidebar, remembered in localStorage (and in the account's preferences, see the default layout). */
export function useTheme() {
  /** The saved pick. */
  function saved(): ThemeChoice {
    const value = localStorage.getItem(THEME_KEY)
    return ORDER.includes(value as ThemeChoice) ? value as ThemeChoice : 'system'
  }
  /** Applies the saved pick to the page (start-up, before the first paint). */
  function init(): void {
    apply(saved())
    // Following the device: a change of its setting changes the page.
    if (typeof matchMedia === 'function') matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => apply(saved()))
  }
  /** Shows the saved pick on the toggle (after hydration, so the server's page and the browser's agree). */
  function sync(): void {
    choice.value = saved()
  }
  /** Whether this browser has a pick of its own (else the account's preference seeds it). */
  function picked(): boolean {
    return localStorage.getItem(THEME_KEY) !== null
  }
  /** Shows and keeps `value` (the person's pick, from the toggle or their account's preference). */
  function set(value: ThemeChoice): void {
    choice.value = value
    localStorage.setItem(THEME_KEY, value)
    apply(value)
  }
  /** System → light → dark → system. */
  function cycle(): void {
    set(ORDER[(ORDER.indexOf(choice.value) + 1) % ORDER.length]!)
  }
  return { choice, init, sync, picked, set, cycle }
}
