import type { H3Event } from 'h3'
import type { z } from 'zod'
import { readJsonBody as readBoundedJsonBody, type ReadJsonBodyOptions } from '../lib/http/read-json-body'
import { clientAddress } from '../lib/http/client-address'
import { currentServerRuntime } from '../lib/runtime/current'

/**
 * The request's JSON body validated by `schema`: 413 past the size limit (checked while reading), 415 when not JSON, 400 too deeply nested or naming each invalid field;
 * 429 / 503 when this client address (or the server) is already receiving too many bytes at once.
 */
export function readJsonBody<T extends z.ZodType>(event: H3Event, schema: T, options?: Omit<ReadJsonBodyOptions, 'reserve'>): Promise<z.output<T>> {
  const bodies = currentServerRuntime()?.bodies
  // The address is looked up only for a request that has a body to reserve.
  const reserve = bodies && ((bytes: number) => bodies.reserve(clientAddress(event, useServerConfig(event)) ?? 'unknown', bytes))
  return readBoundedJsonBody(event, schema, { ...options, ...(reserve ? { reserve } : {}) })
}
