import { z } from 'zod'

const base64url = (bytes: number) => z.string().max(200).regex(/^[\w-]+={0,2}$/, 'must be base64url').refine(value => Buffer.from(value, 'base64url').length === bytes, `must be ${bytes} bytes`)

/** A browser's PushSubscription as its `toJSON()` gives it (the endpoint and the keys to encrypt for it), and a name for the device. */
export const pushSubscriptionSchema = z.object({
  endpoint: z.url({ protocol: /^https?$/ }).max(2_048),
  keys: z.object({ p256dh: base64url(65), auth: base64url(16) }),
  label: z.string().trim().max(80).optional(),
})
export type PushSubscriptionInput = z.infer<typeof pushSubscriptionSchema>
