import { pushSubscriptionSchema } from '../../../../shared/schemas/push'

/** Turns notifications on for this device: its browser's push subscription (`toJSON()`), and a name for it. */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  const body = await readJsonBody(event, pushSubscriptionSchema.strip())
  setResponseStatus(event, 201)
  return { device: await usePersonal().push.subscribe(user.id, body) }
})
