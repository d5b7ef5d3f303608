import { computed, ref, type Ref } from 'vue'
import { artifactKey, artifactsIn } from '#shared/artifacts'
import { conversationArtifacts } from '../utils/artifacts'

/**
 * The artifact panel of a conversation (the owner's, or a shared snapshot): what its finished
 * answers built, keyed alike for versions, and which one is open at which version. `shown` is set
 * by the first `open`, so the panel's code loads only then.
 */
export function useArtifactPanel(messages: Ref<ReadonlyArray<{ id: string, role: string, content: string, status?: string }>>) {
  const artifacts = computed(() => conversationArtifacts(messages.value))
  const isOpen = ref(false)
  /** The artifact on view: its key among the conversation's, and the version shown. */
  const shown = ref<{ key: string, version: number }>()
  const versions = computed(() => shown.value ? artifacts.value.get(shown.value.key) ?? [] : [])
  /** Opens artifact `index` of answer `message`, at its own version. */
  function open(message: { id: string, content: string }, index: number): void {
    const artifact = artifactsIn(message.content)[index]
    if (!artifact) return
    const key = artifactKey(artifact)
    shown.value = { key, version: (artifacts.value.get(key) ?? []).findIndex(version => version.messageId === message.id && version.index === index) }
    isOpen.value = true
  }
  return { isOpen, shown, versions, open }
}
