/**
 * The notification region's two focus sentinels (Reka UI's toast viewport) are tabbable and
 * `aria-hidden`, which axe reports as a serious `aria-hidden-focus` violation whenever a toast
 * shows (unovue/reka-ui#2776). This applies the upstream fix (unovue/reka-ui#2810) until a release
 * has it: the sentinels stay tabbable (Tab still reaches the toasts) and are no longer hidden.
 */
const SENTINELS = '[role=region][aria-label^="Notifications"] > span[aria-hidden="true"][tabindex="0"]'

export default defineNuxtPlugin(() => {
  const unhide = () => document.querySelectorAll(SENTINELS).forEach(sentinel => sentinel.removeAttribute('aria-hidden'))
  const observer = new MutationObserver(unhide)
  observer.observe(document.body, { childList: true, subtree: true, attributes: true, attributeFilter: ['aria-hidden'] })
  unhide()
})
