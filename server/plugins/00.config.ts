/** Fails start-up with a readable list of problems when the runtime config cannot work. */
export default defineNitroPlugin(() => {
  const config = useServerConfig()
  configureServerToolRegistry({ defaultTimeoutMs: config.backgroundJobs.toolExecution.defaultTimeoutMs })
})
