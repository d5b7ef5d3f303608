import { describe, expect, it } from 'vitest'
import { streamRequestSchema } from '../../../server/lib/agent/stream-request-schema'

const withParts = (parts: unknown[]) => ({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: parts }] })
const problem = (body: unknown) => {
  const result = streamRequestSchema.safeParse(body)
  return result.success ? undefined : result.error.issues.map(issue => `${issue.path.join('.')}: ${issue.message}`).join('; ')
}

describe('content parts of a chat request', () => {
  it('takes text, images as data URLs and the app\'s own attachments', () => {
    expect(problem(withParts([{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'low' } }, { type: 'or3_attachment', id: 'file-1' }]))).toBeUndefined()
  })

  it('refuses links, files, audio and unknown parts, naming the part', () => {
    expect(problem(withParts([{ type: 'image_url', image_url: { url: 'http://169.254.169.254/latest/meta-data/' } }]))).toMatch(/messages\.0\.content\.0.*links are not sent to the model/)
    expect(problem(withParts([{ type: 'image_url', image_url: { url: 'http://10.0.0.5/internal.png' } }]))).toMatch(/must be a data URL/)
    expect(problem(withParts([{ type: 'text', text: 'x' }, { type: 'file', file: { filename: 'a.pdf', file_data: 'https://internal/a.pdf' } }]))).toMatch(/messages\.0\.content\.1: must be a text part, an image as a data URL, or a file attached/)
    expect(problem(withParts([{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }]))).toMatch(/file and audio parts are not accepted/)
    expect(problem(withParts([{ type: 'image_url', image_url: { url: 'data:image/svg+xml;base64,PHN2Zz4=' } }]))).toMatch(/PNG, JPEG, GIF or WebP/)
  })
})
