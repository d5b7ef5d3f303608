import { ref } from 'vue'
import { errorMessage } from '../utils/http-error'

/**
 * A form's actions one at a time: `busy` while one runs, and `problem`, the words of the last
 * one's failure (cleared when one succeeds), for a `role="alert"` line.
 */
export function useBusyAction() {
  const busy = ref(false)
  const problem = ref('')

  async function run(action: () => Promise<void>): Promise<void> {
    busy.value = true
    try {
      await action()
      problem.value = ''
    } catch (error) {
      problem.value = errorMessage(error)
    } finally {
      busy.value = false
    }
  }

  return { busy, problem, run }
}
