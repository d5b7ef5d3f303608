declare module '#or3/server-tools' {
  import type { ToolModuleSource } from '../lib/tools/discovery'

  /** Every tool file under server/tools/**, listed at build time by modules/server-tools.ts. */
  export const serverToolModules: ToolModuleSource[]
}
