import type { H3Event } from 'h3'
import type { z } from 'zod'
import { readJsonBody as readBoundedJsonBody, type ReadJsonBodyOptions } from '../lib/http/read-json-body'

/** The request's JSON body validated by `schema`: 413 past the size limit (checked while reading), 415 when not JSON, 400 too deeply nested or naming each invalid field. */
export function readJsonBody<T extends z.ZodType>(event: H3Event, schema: T, options?: ReadJsonBodyOptions): Promise<z.output<T>> {
  return readBoundedJsonBody(event, schema, options)
}
