import { currentTag, tr } from './i18n'

/** One section of the conversation list. */
export interface ThreadGroup<T> {
  label: string
  threads: T[]
}

const DAY_MS = 24 * 60 * 60 * 1000

/**
 * The conversation list in sections by last activity, the way people look for a conversation:
 * Today, Yesterday, Previous 7 days, Previous 30 days, then one per month ("October 2026"), in the
 * browser's time zone. Each section keeps the list's order (newest first); a time in the future
 * (another device's clock) counts as today.
 */
export function groupThreadsByDay<T extends { updatedAt: number }>(threads: readonly T[], now = Date.now(), locale?: string): ThreadGroup<T>[] {
  const today = new Date(now)
  today.setHours(0, 0, 0, 0)
  const startOfToday = today.getTime()
  const month = new Intl.DateTimeFormat(locale ?? currentTag(), { month: 'long', year: 'numeric' })
  const labelOf = (time: number): string => {
    if (time >= startOfToday) return tr('threadGroups.today')
    if (time >= startOfToday - DAY_MS) return tr('threadGroups.yesterday')
    if (time >= startOfToday - 7 * DAY_MS) return tr('threadGroups.week')
    if (time >= startOfToday - 30 * DAY_MS) return tr('threadGroups.month')
    return month.format(time)
  }
  // One section per label, in the order the list first reaches it (newest first: the order of time).
  const groups = new Map<string, T[]>()
  for (const thread of threads) {
    const label = labelOf(thread.updatedAt)
    const section = groups.get(label)
    if (section) section.push(thread)
    else groups.set(label, [thread])
  }
  return [...groups].map(([label, list]) => ({ label, threads: list }))
}

/** The sidebar's sections: pinned conversations, then each folder, then the rest by day. */
export interface SidebarSections<T> {
  pinned: T[]
  folders: Array<{ id: string, name: string, threads: T[] }>
  byDay: ThreadGroup<T>[]
}

/**
 * Splits the list (newest first) for the sidebar: pinned conversations on top (also under their
 * folder), every folder (empty ones too, to drop into), and what is in neither by day. A folder id
 * the person no longer has counts as none.
 */
export function sidebarSections<T extends { updatedAt: number, pinned?: boolean, folderId?: string }>(threads: readonly T[], folders: ReadonlyArray<{ id: string, name: string }>, now = Date.now(), locale?: string): SidebarSections<T> {
  const known = new Set(folders.map(folder => folder.id))
  const filed = (thread: T) => thread.folderId !== undefined && known.has(thread.folderId)
  return {
    pinned: threads.filter(thread => thread.pinned),
    folders: folders.map(folder => ({ id: folder.id, name: folder.name, threads: threads.filter(thread => thread.folderId === folder.id) })),
    byDay: groupThreadsByDay(threads.filter(thread => !thread.pinned && !filed(thread)), now, locale),
  }
}
