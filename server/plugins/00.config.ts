/** Fails start-up with a readable list of problems when the runtime config cannot work. */
export default defineNitroPlugin(() => {
  useServerConfig()
})
