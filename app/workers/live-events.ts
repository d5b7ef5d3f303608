/// <reference lib="webworker" />
/**
 * The shared worker every tab of the app connects to (app/utils/live-events-hub.ts does the work):
 * one live connection for the whole browser, whatever the number of tabs. A tab that goes away is
 * noticed through the Web Lock it holds while it lives (app/utils/live-events.ts), so what only
 * it watched is let go.
 */
import { BROWSER_EFFECTS, LiveEventsHub, tabLockName, type TabMessage, type TabPort } from '../utils/live-events-hub'

declare const self: SharedWorkerGlobalScope

const hub = new LiveEventsHub(BROWSER_EFFECTS)

self.addEventListener('connect', (event) => {
  const port = (event as MessageEvent).ports[0]!
  const tab: TabPort = { postMessage: message => port.postMessage(message) }
  port.addEventListener('message', (message: MessageEvent<TabMessage | { type: 'hello', tabId: string }>) => {
    const data = message.data
    if (data.type === 'hello') {
      hub.add(tab)
      // Granted once the tab's own lock is released: the tab has closed.
      void navigator.locks?.request(tabLockName(data.tabId), () => hub.remove(tab))
      return
    }
    hub.receive(tab, data)
  })
  port.start()
})
