import { isAbsolute, relative, resolve } from 'node:path'
import { defineNuxtModule } from 'nuxt/kit'
import { displayPath, findToolFiles } from '../server/lib/tools/tool-files'

export const SERVER_TOOLS_VIRTUAL_MODULE = '#or3/server-tools'

/**
 * Build-time half of tool discovery: lists every tool file under server/tools/** (of the app and of
 * each layer it extends) into the virtual module `#or3/server-tools` as lazy imports, so
 * server/plugins/10.tools.ts can register them at start-up and report a broken file
 * without losing the others. In development, adding or removing a tool file restarts the server.
 */
export default defineNuxtModule({
  meta: { name: 'or3-server-tools' },
  setup(_options, nuxt) {
    const toolDirs = nuxt.options._layers.map(layer => ({
      rootDir: layer.config.rootDir,
      toolsDir: resolve(layer.config.serverDir ?? resolve(layer.config.rootDir, 'server'), 'tools'),
    }))

    nuxt.hook('nitro:config', (config) => {
      config.virtual ??= {}
      config.virtual[SERVER_TOOLS_VIRTUAL_MODULE] = () => {
        const entries = toolDirs.flatMap(({ rootDir, toolsDir }) => findToolFiles(toolsDir).map(file =>
          `  { path: ${JSON.stringify(displayPath(rootDir, file))}, load: () => import(${JSON.stringify(file)}) },`))
        return `export const serverToolModules = [\n${entries.join('\n')}\n]\n`
      }
    })

    // Folders outside srcDir (app/) are only watched when listed here.
    if (nuxt.options.dev) nuxt.options.watch.push(...toolDirs.map(({ toolsDir }) => toolsDir))
    nuxt.hook('builder:watch', async (event, path) => {
      if (!['add', 'unlink', 'addDir', 'unlinkDir'].includes(event)) return
      const absolute = resolve(nuxt.options.srcDir, path)
      const inToolsDir = toolDirs.some(({ toolsDir }) => {
        const inside = relative(toolsDir, absolute)
        return !inside.startsWith('..') && !isAbsolute(inside)
      })
      if (inToolsDir) await nuxt.callHook('restart')
    })
  },
})
