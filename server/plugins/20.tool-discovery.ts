import { consola } from 'consola'
import { serverToolModules } from '#or3/server-tools'
import { registerToolModules } from '../lib/tools/tool-discovery'

const logger = consola.withTag('tools')

/** Registers the tool files of server/tools/** and reports, with its path, every file that could not be. */
export default defineNitroPlugin(() => {
  if (!useServerConfig().tools.discovery) return
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
