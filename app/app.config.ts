/** Nuxt UI's colours: the app's blue for actions, slate for everything neutral. */
export default defineAppConfig({
  ui: {
    colors: { primary: 'blue', neutral: 'slate' },
  },
})
