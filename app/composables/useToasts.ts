import { ref } from 'vue'

/** One in-app message. */
export interface Toast {
  id: number
  title: string
  body?: string
  tone: 'info' | 'success' | 'error'
  /** Where "Open" goes, if anywhere. */
  to?: string
}

const toasts = ref<Toast[]>([])
let nextId = 1

/** In-app toasts (shown by <ToastHost>), dismissed by the user or after `timeoutMs`. */
export function useToasts() {
  function dismiss(id: number): void {
    toasts.value = toasts.value.filter(toast => toast.id !== id)
  }
  function show(toast: Omit<Toast, 'id'>, timeoutMs = 8000): number {
    const id = nextId++
    toasts.value = [...toasts.value.slice(-3), { ...toast, id }]
    if (timeoutMs > 0) setTimeout(() => dismiss(id), timeoutMs)
    return id
  }
  return { toasts, show, dismiss }
}
