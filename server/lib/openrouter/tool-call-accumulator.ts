import { randomUUID } from 'node:crypto'
import type { ChatCompletionChunk, StreamedToolCall } from './types'

type ToolCallFragment = NonNullable<NonNullable<NonNullable<ChatCompletionChunk['choices']>[number]['delta']>['tool_calls']>[number]

interface PartialToolCall {
  id: string | null
  name: string
  arguments: string
}

/**
 * Joins streamed tool-call fragments into complete calls, tolerating what real providers send:
 * - fragments are keyed by `index`, never by `id` (the id is only on the first fragment);
 * - without an `index`, a fragment carrying an id or a name opens a new call, others continue the last;
 * - a fragment on a known index with a different id and its own name is a new call (providers that
 *   number every call 0);
 * - empty, null or repeated ids are replaced with unique ones;
 * - empty or missing arguments mean `{}`.
 */
export class ToolCallAccumulator {
  private readonly calls: PartialToolCall[] = []
  private readonly byIndex = new Map<number, PartialToolCall>()
  private last: PartialToolCall | null = null

  /** Whether any call has been opened. */
  get hasCalls(): boolean {
    return this.calls.some(call => call.name !== '')
  }

  add(fragment: ToolCallFragment): void {
    const id = typeof fragment.id === 'string' && fragment.id !== '' ? fragment.id : null
    const name = typeof fragment.function?.name === 'string' ? fragment.function.name : ''
    const argumentsPiece = typeof fragment.function?.arguments === 'string' ? fragment.function.arguments : ''

    let call: PartialToolCall | undefined
    if (typeof fragment.index === 'number') {
      call = this.byIndex.get(fragment.index)
      const isAnotherCall = call && id && call.id && call.id !== id && name
      if (!call || isAnotherCall) {
        call = this.open()
        this.byIndex.set(fragment.index, call)
      }
    } else {
      call = (id || name || !this.last) ? this.open() : this.last
    }

    if (id && !call.id) call.id = id
    if (name && !call.name) call.name = name
    call.arguments += argumentsPiece
    this.last = call
  }

  /** The complete calls in the order they were opened, with unique ids and `{}` for empty arguments. */
  finish(): StreamedToolCall[] {
    const seenIds = new Set<string>()
    return this.calls
      .filter(call => call.name !== '')
      .map((call, index) => {
        let id = call.id
        if (!id || seenIds.has(id)) id = `call_${randomUUID().replaceAll('-', '').slice(0, 24)}`
        seenIds.add(id)
        return { id, name: call.name, arguments: call.arguments.trim() === '' ? '{}' : call.arguments, index }
      })
  }

  private open(): PartialToolCall {
    const call: PartialToolCall = { id: null, name: '', arguments: '' }
    this.calls.push(call)
    return call
  }
}
