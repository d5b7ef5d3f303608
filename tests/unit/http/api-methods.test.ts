import { describe, expect, it } from 'vitest'
import { allowedMethods, type ApiRoute } from '../../../server/lib/http/api-methods'

const routes: ApiRoute[] = [
  { route: '/api/jobs', methods: ['GET'] },
  { route: '/api/jobs/:id', methods: ['GET'] },
  { route: '/api/jobs/:id/abort', methods: ['POST'] },
  { route: '/api/threads/:id', methods: ['DELETE', 'GET', 'PATCH'] },
  { route: '/api/anything', methods: ['ALL'] },
]

describe('allowed methods of an API path', () => {
  it('lists the methods of the path\'s routes, HEAD wherever GET is', () => {
    expect(allowedMethods(routes, '/api/jobs')).toEqual(['GET', 'HEAD'])
    expect(allowedMethods(routes, '/api/jobs/abc/abort')).toEqual(['POST'])
    expect(allowedMethods(routes, '/api/threads/t-1?x=1')).toEqual(['DELETE', 'GET', 'HEAD', 'PATCH'])
    expect(allowedMethods(routes, '/api/jobs/')).toEqual(['GET', 'HEAD'])
  })

  it('says nothing for unknown paths and for routes that take any method', () => {
    expect(allowedMethods(routes, '/api/nope')).toBeUndefined()
    expect(allowedMethods(routes, '/api/jobs/a/b/c')).toBeUndefined()
    expect(allowedMethods(routes, '/api/anything')).toBeUndefined()
  })
})
