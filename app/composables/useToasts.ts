import { useToast } from '@nuxt/ui/composables/useToast'
import { tr } from '../utils/i18n'

/** One in-app message, as the app words it. */
export interface Toast {
  title: string
  body?: string
  tone: 'info' | 'success' | 'error'
  /** Where "Open" goes, if anywhere. */
  to?: string
}

const TONES = {
  info: { color: 'neutral', icon: 'i-lucide-info' },
  success: { color: 'success', icon: 'i-lucide-circle-check' },
  error: { color: 'error', icon: 'i-lucide-circle-alert' },
} as const

/**
 * In-app toasts, shown by Nuxt UI's toaster (in `<UApp>`, top right, clear of the composer):
 * dismissed by the person, by "Open", or after `timeoutMs` (0: until dismissed).
 */
export function useToasts() {
  const toaster = useToast()
  function dismiss(id: string | number): void {
    toaster.remove(id)
  }
  function show(toast: Toast, timeoutMs = 8000): string | number {
    const id = `toast-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`
    toaster.add({
      id,
      title: toast.title,
      description: toast.body,
      ...TONES[toast.tone],
      duration: timeoutMs > 0 ? timeoutMs : Number.POSITIVE_INFINITY,
      actions: toast.to ? [{ label: tr('toast.open'), to: toast.to, color: 'neutral', variant: 'outline', onClick: () => dismiss(id) }] : undefined,
      ui: { description: 'line-clamp-2' },
      // Passed through to the toast's element (not in the toast type): tests find toasts by it.
      ...{ 'data-testid': 'toast' },
    })
    return id
  }
  return { show, dismiss }
}
