/**
 * Nuxt UI: the app's blue for actions, slate for everything neutral. On a phone (below 48rem, where
 * the top bar with the menu button shows) notifications start under that bar rather than over it.
 */
export default defineAppConfig({
  ui: {
    colors: { primary: 'blue', neutral: 'slate' },
    toaster: { compoundVariants: [{ position: ['top-left', 'top-center', 'top-right'], class: { viewport: 'max-md:top-16' } }] },
  },
})
