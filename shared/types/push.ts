/** A device a person turned notifications on for (Web Push), as the app lists it. */
export interface PushDevice {
  id: string
  /** What the person's browser called itself when it subscribed ("Chrome on Linux"). */
  label: string
  /** Its push service's host (fcm.googleapis.com, updates.push.services.mozilla.com…). */
  host: string
  createdAt: number
}
