import calculate from './calculate'
import getCurrentTime from './get-current-time'
import getCurrentWeather from './get-current-weather'

/** The tools every installation has; registered by server/plugins/10.tool-registry.ts. */
export const builtinServerTools = [getCurrentTime, calculate, getCurrentWeather]
