import { isAbsolute, relative, resolve } from 'node:path'
import { defineNuxtModule } from 'nuxt/kit'
import { displayPath, findToolFiles } from '../server/lib/tools/tool-files'

export const SERVER_TOOLS_VIRTUAL_MODULE = '#or3/server-tools'

/**
 * Build-time half of tool discovery: lists every tool file under server/tools/** into the virtual
 * module `#or3/server-tools` as lazy imports, so server/plugins/20.tool-discovery.ts can register
 * them at start-up and report a broken file without losing the others. In development, adding or
 * removing a tool file restarts the server so the list stays true.
 */
export default defineNuxtModule({
  meta: { name: 'or3-server-tools' },
  setup(_options, nuxt) {
    const toolsDir = resolve(nuxt.options.serverDir, 'tools')

    nuxt.hook('nitro:config', (config) => {
      config.virtual ??= {}
      config.virtual[SERVER_TOOLS_VIRTUAL_MODULE] = () => {
        const entries = findToolFiles(toolsDir).map(file =>
          `  { path: ${JSON.stringify(displayPath(nuxt.options.rootDir, file))}, load: () => import(${JSON.stringify(file)}) },`)
        return `export const serverToolModules = [\n${entries.join('\n')}\n]\n`
      }
    })

    nuxt.hook('builder:watch', async (event, path) => {
      if (!['add', 'unlink', 'addDir', 'unlinkDir'].includes(event)) return
      const absolute = isAbsolute(path) ? path : resolve(nuxt.options.rootDir, path)
      const inside = relative(toolsDir, absolute)
      if (!inside.startsWith('..') && !isAbsolute(inside)) await nuxt.callHook('restart')
    })
  },
})
