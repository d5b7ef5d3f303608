import type { Directive } from 'vue'

/**
 * `v-listbox-name="'Models'"` on an element around a Nuxt UI command palette: gives the listbox
 * inside it an accessible name (the component takes none for it, and a name on its root would sit
 * on an element without a role). Set once the list is drawn, and again if it is drawn anew.
 */
export const vListboxName: Directive<HTMLElement, string> = {
  mounted(element, binding) {
    const name = () => {
      const listbox = element.querySelector('[role=listbox]')
      if (listbox && listbox.getAttribute('aria-label') !== binding.value) listbox.setAttribute('aria-label', binding.value)
    }
    name()
    // The palette's code may load after this element is mounted (it is lazy), and its list with it.
    const observer = new MutationObserver(name)
    observer.observe(element, { childList: true, subtree: true })
    observers.set(element, observer)
  },
  unmounted(element) {
    observers.get(element)?.disconnect()
    observers.delete(element)
  },
}

const observers = new WeakMap<HTMLElement, MutationObserver>()
