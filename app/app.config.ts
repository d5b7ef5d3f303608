/**
 * Nuxt UI: the app's blue for actions, slate for everything neutral. On a phone (below 48rem, where
 * the top bar with the menu button shows) notifications start under that bar rather than over it.
 * A solid button under the pointer fades less than Nuxt UI's 75% (white on 75% blue is 4.1:1, under
 * WCAG's 4.5:1; a button stays hovered after a click until the pointer moves).
 */
export default defineAppConfig({
  ui: {
    colors: { primary: 'blue', neutral: 'slate' },
    button: {
      compoundVariants: [
        { color: 'primary', variant: 'solid', class: 'hover:bg-primary/90 active:bg-primary/90' },
        { color: 'error', variant: 'solid', class: 'hover:bg-error/90 active:bg-error/90' },
      ],
    },
    toaster: { compoundVariants: [{ position: ['top-left', 'top-center', 'top-right'], class: { viewport: 'max-md:top-16' } }] },
  },
})
