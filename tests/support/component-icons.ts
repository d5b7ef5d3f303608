/**
 * Nuxt UI's icons in component tests: the Lucide set from the installed package, as the app
 * bundles it, so no test asks the Iconify API (the network) for an icon.
 */
import { addCollection } from '@iconify/vue'
import { icons } from '@iconify-json/lucide'

addCollection(icons)
