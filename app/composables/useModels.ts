import { computed, ref, watch } from 'vue'
import { useApiKey } from './useApiKey'
import { errorMessage } from '../utils/http-error'
import { tr } from '../utils/i18n'
import type { ModelCatalog, ModelSummary } from '../../shared/types/model'

const MODEL_KEY = 'or3:model'
const models = ref<ModelSummary[]>([])
const selected = ref('')
/** More models to answer the next question side by side with the picked one (none: it answers alone). */
const compareWith = ref<string[]>([])
const error = ref<string>()
let watching = false
/**
 * Whether the picked model reads images sent with a message; undefined while the models are still
 * loading, so an image picked meanwhile is not refused for a model not known yet (the server
 * checks it when the message is sent).
 */
const imagesAccepted = computed<boolean | undefined>(() => models.value.find(model => model.id === selected.value)?.acceptsImages)

/** The models the server offers (the offline demo model among them) and the one picked. */
export function useModels() {
  const apiKey = useApiKey()

  async function refresh(): Promise<void> {
    try {
      const catalog = await $fetch<ModelCatalog>('/api/models', { headers: apiKey.headers() })
      models.value = catalog.models
      // The server says why the real models are missing (a bad key, no network) in words to show.
      error.value = catalog.error
      const remembered = typeof localStorage !== 'undefined' ? localStorage.getItem(MODEL_KEY) : null
      compareWith.value = compareWith.value.filter(id => models.value.some(model => model.id === id))
      if (!models.value.some(model => model.id === selected.value)) {
        selected.value = models.value.find(model => model.id === remembered)?.id ?? models.value[0]?.id ?? ''
      }
    } catch (cause) {
      error.value = errorMessage(cause, tr('errors.modelsFailed'))
    }
  }

  if (!watching && typeof localStorage !== 'undefined') {
    watching = true
    watch(selected, value => value && localStorage.setItem(MODEL_KEY, value))
  }
  return { models, selected, compareWith, imagesAccepted, error, refresh }
}
