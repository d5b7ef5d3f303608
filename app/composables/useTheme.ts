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

/** Light, dark or the system's: the toggle in the sidebar, remembered in localStorage. */
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
  /** System → light → dark → system. */
  function cycle(): void {
    choice.value = ORDER[(ORDER.indexOf(choice.value) + 1) % ORDER.length]!
    localStorage.setItem(THEME_KEY, choice.value)
    apply(choice.value)
  }
  return { choice, init, sync, cycle }
}
