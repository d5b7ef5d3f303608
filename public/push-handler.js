// The service worker's part of Web Push (imported by the generated /sw.js, nuxt.config.ts "pwa"):
// a push from the server shows as a notification of the device; clicking it focuses an open tab
// of the app on its page, or opens one.
self.addEventListener('push', (event) => {
  let message
  try {
    message = event.data ? event.data.json() : undefined
  } catch {
    message = undefined
  }
  if (!message || typeof message.title !== 'string') return
  event.waitUntil(self.registration.showNotification(message.title, {
    body: typeof message.body === 'string' ? message.body : '',
    tag: typeof message.tag === 'string' ? message.tag : undefined,
    icon: '/icons/icon-192.png',
    badge: '/icons/icon-192.png',
    data: { url: typeof message.url === 'string' && message.url.startsWith('/') ? message.url : '/' },
  }))
})

self.addEventListener('notificationclick', (event) => {
  event.notification.close()
  const url = new URL(event.notification.data?.url ?? '/', self.location.origin).href
  event.waitUntil((async () => {
    const open = await self.clients.matchAll({ type: 'window', includeUncontrolled: true })
    const same = open.find(client => client.url === url) ?? open[0]
    if (same) {
      await same.focus()
      if (same.url !== url && 'navigate' in same) await same.navigate(url)
      return
    }
    await self.clients.openWindow(url)
  })())
})
