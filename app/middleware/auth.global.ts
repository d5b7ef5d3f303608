import { useAuth } from '../composables/useAuth'

/** Pages need a signed-in account (or a guest session when the server allows guests): otherwise the sign-in page. */
export default defineNuxtRouteMiddleware(async (to) => {
  // A share link's page says itself whether its viewer must sign in.
  if (import.meta.server || to.path.startsWith('/share/')) return
  const auth = useAuth()
  const state = auth.state.value ?? await auth.refresh().catch(() => null)
  if (!state) return
  const signedIn = state.user !== null
  // A guest may open the sign-in page; an account holder has nothing to do there.
  if (to.path === '/login') return signedIn && state.user?.role !== 'guest' ? navigateTo('/') : undefined
  if (!signedIn) return navigateTo({ path: '/login', query: to.fullPath === '/' ? {} : { next: to.fullPath } })
  // The admin requires two-step sign-in of this account, which has not set it up: that comes first.
  if (state.twoStepPending && to.path !== '/two-step') return navigateTo('/two-step')
  if ((to.path === '/admin' || to.path.startsWith('/admin/')) && state.user?.role !== 'admin') return navigateTo('/')
})
