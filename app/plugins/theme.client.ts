import { useTheme } from '../composables/useTheme'

/** Applies the person's light/dark pick before the first page is drawn. */
export default defineNuxtPlugin(() => {
  useTheme().init()
})
