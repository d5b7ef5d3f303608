/** What an answer built: the buttons under a finished answer, versions across a conversation, and the file names they download as. */
import { mount } from '@vue/test-utils'
import { describe, expect, it } from 'vitest'
import ChatMessage from '../../app/components/ChatMessage.vue'
import { artifactFileName, conversationArtifacts, svgImageUrl } from '../../app/utils/artifacts'

const page = (title: string, body: string) => `\`\`\`html\n<html><head><title>${title}</title></head><body>${body}</body></html>\n\`\`\``

describe('artifacts of an answer', () => {
  it('offers each page, image, diagram or document a finished answer built; none while it streams, nor where not asked', async () => {
    const content = `Here.\n\n${page('Landing', 'hi')}\n\n\`\`\`mermaid\nflowchart LR\n A-->B\n\`\`\``
    const wrapper = mount(ChatMessage, { props: { message: { id: 'a', role: 'assistant', content, status: 'complete' }, canOpenArtifacts: true } })
    const buttons = wrapper.findAll('[data-testid=message-artifacts] button')
    expect(buttons.map(button => button.text())).toEqual(['Landing', 'flowchart diagram'])
    expect(buttons.map(button => button.attributes('aria-label'))).toEqual(['Open Landing (HTML page)', 'Open flowchart diagram (Mermaid diagram)'])
    await buttons[1]!.trigger('click')
    expect(wrapper.emitted('openArtifact')).toEqual([[1]])
    const streaming = mount(ChatMessage, { props: { message: { id: 'a', role: 'assistant', content, status: 'streaming' }, canOpenArtifacts: true } })
    expect(streaming.find('[data-testid=message-artifacts]').exists()).toBe(false)
    const shared = mount(ChatMessage, { props: { message: { id: 'a', role: 'assistant', content, status: 'complete' } } })
    expect(shared.find('[data-testid=message-artifacts]').exists()).toBe(false)
  })

  it('makes later answers\' changes of one thing its versions, in order; other things stay apart', () => {
    const byKey = conversationArtifacts([
      { id: 'q1', role: 'user', content: page('Landing', 'not an answer') },
      { id: 'a1', role: 'assistant', content: page('Landing', 'v1'), status: 'complete' },
      { id: 'a2', role: 'assistant', content: `${page('Pricing', 'p')}\n${page('landing', 'v2')}`, status: 'complete' },
      { id: 'a3', role: 'assistant', content: page('Landing', 'v3 still streaming'), status: 'streaming' },
    ])
    expect([...byKey.keys()]).toEqual(['html:landing', 'html:pricing'])
    expect(byKey.get('html:landing')!.map(version => [version.messageId, version.index])).toEqual([['a1', 0], ['a2', 1]])
  })

  it('downloads under a safe file name, and shows an SVG as an image address', () => {
    expect(artifactFileName({ kind: 'html', title: 'Q3 / report: <final>' })).toBe('Q3  report final.html')
    expect(artifactFileName({ kind: 'mermaid', title: '///' })).toBe('artifact.mmd')
    expect(svgImageUrl('<svg a="1"/>')).toBe('data:image/svg+xml;charset=utf-8,%3Csvg%20a%3D%221%22%2F%3E')
  })
})
