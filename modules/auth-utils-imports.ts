import { defineNuxtModule } from 'nuxt/kit'

/**
 * The names of nuxt-auth-utils the server uses (the sealed session), by the file that exports them.
 * Its password hashing is made the same way in server/lib/auth/password-hashing.ts, which loads the
 * hashing library with the first password rather than at every start.
 */
const USED = {
  'runtime/server/utils/session': ['replaceUserSession', 'clearUserSession'],
}

/**
 * nuxt-auth-utils auto-imports every one of its server utilities and ~50 OAuth handlers into each
 * route; the app uses two of them (and has its own `requireSessionUser` beside the module's
 * `requireUserSession`). This keeps its folders out of Nitro's auto-imports and imports the two
 * by name, so a route cannot call one of the module's helpers by accident.
 */
export default defineNuxtModule({
  meta: { name: 'or3-auth-utils-imports' },
  setup(_options, nuxt) {
    nuxt.hook('nitro:config', (config) => {
      // A scanned folder is a path (or, in other modules, an object with its own path).
      const isModuleDir = (dir: unknown): dir is string => typeof dir === 'string' && /[\\/]nuxt-auth-utils[\\/]dist[\\/]runtime[\\/]/.test(dir)
      const moduleDist = config.imports ? (config.imports.dirs ?? []).find(isModuleDir)?.replace(/[\\/]runtime[\\/].*$/, '') : undefined
      if (!config.imports || !moduleDist) return
      config.imports.dirs = (config.imports.dirs ?? []).filter(dir => !isModuleDir(dir))
      config.imports.imports ??= []
      for (const [file, names] of Object.entries(USED)) {
        for (const name of names) config.imports.imports.push({ name, from: `${moduleDist}/${file}` })
      }
    })
  },
})
