import { flushPromises, mount } from '@vue/test-utils'
import { afterEach, describe, expect, it, vi } from 'vitest'
import MyData from '../../app/components/MyData.vue'

afterEach(() => {
  vi.unstubAllGlobals()
})

describe('Settings → Your data', () => {
  it('offers the export to everyone and the deletion only to an account, asked for with its password', async () => {
    const guest = mount(MyData, { props: { isAccount: false } })
    expect(guest.get('[data-testid="export-my-data"]').attributes('href')).toBe('/api/me/export')
    expect(guest.find('[data-testid="delete-account"]').exists()).toBe(false)
  })

  it('deletes the account only once the password is given, and shows why it was refused', async () => {
    const calls: Array<[string, unknown]> = []
    let refuse = true
    vi.stubGlobal('$fetch', async (url: string, options: unknown) => {
      calls.push([url, options])
      if (refuse) throw Object.assign(new Error('403'), { data: { message: 'That is not your password; your account was not deleted.' } })
      return { deleted: true }
    })
    const assign = vi.fn()
    vi.stubGlobal('location', { assign })
    const wrapper = mount(MyData, { props: { isAccount: true } })
    await wrapper.get('[data-testid="delete-account"]').trigger('click')
    expect(wrapper.get('[data-testid="delete-account-confirm"]').attributes('disabled')).toBeDefined()
    await wrapper.get('[data-testid="delete-account-password"]').setValue('wrong one')
    await wrapper.get('[data-testid="delete-account-form"]').trigger('submit')
    await flushPromises()
    expect(wrapper.get('[role="alert"]').text()).toContain('not your password')
    expect(assign).not.toHaveBeenCalled()

    refuse = false
    await wrapper.get('[data-testid="delete-account-password"]').setValue('the right one')
    await wrapper.get('[data-testid="delete-account-form"]').trigger('submit')
    await flushPromises()
    expect(calls.at(-1)).toEqual(['/api/me', { method: 'DELETE', body: { password: 'the right one' } }])
    expect(assign).toHaveBeenCalledWith('/')
  })
})
