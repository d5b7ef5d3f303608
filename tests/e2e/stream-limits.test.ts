/**
 * One client holding open job streams until the server runs out of connections, against the
 * built server: past each cap it gets a 429 (this user, this job) or 503 (the server) that says
 * what to do, and everyone else is still answered.
 */
import { request as httpRequest, type ClientRequest } from 'node:http'
import { afterAll, describe, expect, it } from 'vitest'
import { SessionClient } from '../support/job-stream-client'
import { useBuiltApp } from '../support/built-app'

const app = useBuiltApp({
  NUXT_SESSION_PASSWORD: 'a-stream-limits-test-password-long-enough',
  NUXT_DEMO_MODEL_TOKEN_DELAY_MS: '200',
  NUXT_BACKGROUND_JOBS_STREAMS_PER_JOB: '3',
  NUXT_BACKGROUND_JOBS_STREAMS_PER_USER: '5',
  NUXT_BACKGROUND_JOBS_STREAMS_MAX: '6',
})
const open: ClientRequest[] = []

// After hooks run last-registered first: the streams close before the server stops.
afterAll(() => {
  for (const request of open) request.destroy()
})

/** Opens a job stream and resolves with its status (and, for a refusal, its message); a 200 stays open. */
function openStream(client: SessionClient, jobId: string): Promise<{ status: number, message?: string, retryAfter?: string, request: ClientRequest }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${app.url}/api/jobs/${jobId}/stream`, { headers: { cookie: client.cookie, accept: 'text/event-stream' } }, (response) => {
      if (response.statusCode === 200) {
        open.push(request)
        response.resume()
        return resolve({ status: 200, request })
      }
      let text = ''
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => (text += chunk))
      response.on('end', () => resolve({ status: response.statusCode!, message: JSON.parse(text).message, retryAfter: response.headers['retry-after'] as string | undefined, request }))
    })
    request.on('error', reject)
    request.end()
  })
}

const story = { model: 'or3/offline-demo', messages: [{ role: 'user', content: 'Write a long story' }] }

describe('open job streams', () => {
  it('are capped per job, per user and for the server, with a message and Retry-After, while others are answered', async () => {
    const alice = new SessionClient(app.url)
    const bob = new SessionClient(app.url)
    const first = await alice.startJob(story)
    const second = await alice.startJob(story)

    const viewers = [await openStream(alice, first), await openStream(alice, first), await openStream(alice, first)]
    expect(viewers.map(viewer => viewer.status)).toEqual([200, 200, 200])
    const overJob = await openStream(alice, first)
    expect(overJob).toMatchObject({ status: 429, retryAfter: '5', message: expect.stringMatching(/already has 3 live viewers.*Close some tabs/) })
    expect((await bob.fetch('/api/threads')).status).toBe(200)

    expect((await openStream(alice, second)).status).toBe(200)
    expect((await openStream(alice, second)).status).toBe(200)
    expect(await openStream(alice, second)).toMatchObject({ status: 429, message: expect.stringMatching(/You have 5 live streams open/) })

    const bobsJob = await bob.startJob(story)
    expect((await openStream(bob, bobsJob)).status).toBe(200)
    expect(await openStream(bob, bobsJob)).toMatchObject({ status: 503, retryAfter: '5', message: expect.stringMatching(/maximum of 6 live streams/) })

    // A closed stream frees its slot.
    viewers[0]!.request.destroy()
    let reopened = await openStream(bob, bobsJob)
    for (let attempt = 0; reopened.status !== 200 && attempt < 100; attempt++) {
      await new Promise(resolve => setTimeout(resolve, 50))
      reopened = await openStream(bob, bobsJob)
    }
    expect(reopened.status).toBe(200)
  })
})
