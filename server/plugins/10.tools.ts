import { consola } from 'consola'
import { serverToolModules } from '#or3/server-tools'
import { builtinServerTools } from '../lib/tools/builtin'
import { registerToolModules } from '../lib/tools/discovery'
import { configureServerToolRegistry, deferServerToolsReady, registerServerTool } from '../lib/tools/registry'

/**
 * Fills the tool registry from every source: the built-ins, then the tool files of
 * server/tools/** (each file that cannot be registered is reported with its path).
 */
export default defineNitroPlugin(() => {
  // Made here, after the log format is set (01.logs.ts): a logger copies its reporters when made.
  const logger = consola.withTag('tools')
  const config = useServerConfig()
  configureServerToolRegistry({ defaultTimeoutMs: config.backgroundJobs.toolExecution.defaultTimeoutMs })
  // `override` keeps dev-server reloads from tripping over themselves.
  for (const tool of builtinServerTools) {
    registerServerTool(tool.definition, tool.handler, { ...tool.options, override: true, source: { kind: 'builtin' } })
  }

  if (!config.tools.discovery) return
  const discovery = registerToolModules(serverToolModules).then((report) => {
    for (const failure of report.failed) {
      logger.error(`Skipped ${failure.path}: ${failure.error}`)
    }
    if (report.registered.length > 0) {
      logger.info(`Registered ${report.registered.map(tool => tool.name).join(', ')} from server/tools`)
    }
  })
  deferServerToolsReady(discovery)
})
