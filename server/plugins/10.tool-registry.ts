import { builtinServerTools } from '../lib/tools/builtin'

/** Registers the built-in tools. `override` keeps dev-server reloads from tripping over themselves. */
export default defineNitroPlugin(() => {
  for (const tool of builtinServerTools) {
    registerServerTool(tool.definition, tool.handler, { ...tool.options, override: true })
  }
})
