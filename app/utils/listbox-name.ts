import type { Directive } from 'vue'

/**
 * `v-listbox-name="'Models'"` on a Nuxt UI command palette: gives the listbox inside it an
 * accessible name (the component takes none for it, and a name on its root would sit on an
 * element without a role). Set again after each update, in case the list was drawn anew.
 */
export const vListboxName: Directive<HTMLElement, string> = {
  mounted: (element, binding) => nameListbox(element, binding.value),
  updated: (element, binding) => nameListbox(element, binding.value),
}

function nameListbox(element: HTMLElement, name: string): void {
  const listbox = element.querySelector('[role=listbox]')
  if (listbox && listbox.getAttribute('aria-label') !== name) listbox.setAttribute('aria-label', name)
}
