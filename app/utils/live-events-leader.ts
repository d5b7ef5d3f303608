/**
 * The browser's one live connection where there is no SharedWorker (Chrome on Android): the tabs
 * of the origin elect a leader with a Web Lock; the leader runs the hub (live-events-hub.ts) and
 * its connection, and the others reach it through a BroadcastChannel. When the leader closes, its
 * lock passes to a waiting tab, which becomes the leader, says so, and every tab asks it again for
 * what it watches (each job then starts from a snapshot of now). A tab that closes is noticed
 * through the lock it holds while it lives, as with the worker.
 */
import { BROWSER_EFFECTS, LiveEventsHub, tabLockName, type HubMessage, type TabMessage, type TabPort } from './live-events-hub'
import type { LiveChannel } from './live-events'

const CHANNEL = 'or3-live-events'
const LEADER_LOCK = 'or3-live-leader'

/** What goes over the BroadcastChannel. */
type Relayed =
  | { kind: 'tab', from: string, message: TabMessage | { type: 'hello' } }
  | { kind: 'hub', to: string, message: HubMessage }
  | { kind: 'leader' }

/** A tab's channel to the elected leader (itself, once it is elected). */
export function leaderChannel(options: { onNewLeader: () => void }): LiveChannel {
  const tabId = crypto.randomUUID()
  const broadcast = new BroadcastChannel(CHANNEL)
  let receive: (message: HubMessage) => void = () => {}
  let hub: LiveEventsHub | undefined
  const ownPort: TabPort = { postMessage: message => receive(message) }
  const ports = new Map<string, TabPort>()

  const portOf = (id: string): TabPort => {
    let port = ports.get(id)
    if (!port) {
      port = { postMessage: message => broadcast.postMessage({ kind: 'hub', to: id, message } satisfies Relayed) }
      ports.set(id, port)
      // Granted once that tab's own lock is released: it has closed.
      void navigator.locks.request(tabLockName(id), () => {
        ports.delete(id)
        hub?.remove(port!)
      })
    }
    return port
  }

  broadcast.addEventListener('message', (event: MessageEvent<Relayed>) => {
    const relayed = event.data
    if (relayed.kind === 'hub' && relayed.to === tabId) receive(relayed.message)
    else if (relayed.kind === 'leader') options.onNewLeader()
    else if (relayed.kind === 'tab' && hub) {
      const port = portOf(relayed.from)
      if (relayed.message.type === 'hello') hub.add(port)
      else hub.receive(port, relayed.message)
    }
  })

  // What this tab tells the leader waits until it holds its own lock (held while it lives, so the
  // leader learns when it closes): a leader that heard of it first could be granted that lock
  // before the tab, take the tab for closed, and let go of what it watches.
  let lockHeld = false
  const unsent: Relayed[] = []
  const tellLeader = (relayed: Relayed) => {
    if (lockHeld) broadcast.postMessage(relayed)
    else unsent.push(relayed)
  }
  void navigator.locks.request(tabLockName(tabId), () => {
    lockHeld = true
    for (const relayed of unsent.splice(0)) broadcast.postMessage(relayed)
    return new Promise<void>(() => {})
  })
  // Waits to lead; holds the lead for as long as the tab lives.
  void navigator.locks.request(LEADER_LOCK, () => {
    hub = new LiveEventsHub(BROWSER_EFFECTS)
    hub.add(ownPort)
    broadcast.postMessage({ kind: 'leader' } satisfies Relayed)
    options.onNewLeader()
    return new Promise<void>(() => {})
  })
  tellLeader({ kind: 'tab', from: tabId, message: { type: 'hello' } })

  return {
    send: (message) => {
      if (hub) hub.receive(ownPort, message)
      else tellLeader({ kind: 'tab', from: tabId, message })
    },
    listen: (handler) => {
      receive = handler
    },
  }
}
