import { useLogFormat } from '../lib/runtime/logs'

/** Sets the log format before anything logs (lib/runtime/logs.ts: JSON lines in production). */
export default defineNitroPlugin(() => {
  useLogFormat(useServerConfig().logs.format, process.env.NODE_ENV)
})
