/**
 * The image settings (`images.*` of server-config.ts): `generate_image` makes and edits pictures with
 * an image-output model (OpenRouter's image modalities, or a compatible server's), with the person's
 * own key when they gave one, else the server's; with neither (or in a chat with the offline demo
 * model) the demo draws an SVG scene, so it works offline.
 */
import { z } from 'zod'
import { group, setting } from './setting-types'

/** Every image setting, with its default and what it means. */
export function imageSettings() {
  return group({
    enabled: setting(z.boolean(), true,
      'Offer `generate_image` (policy name `capability:image_generation`; guests only when a rule allows it): the model makes or edits pictures, kept as the conversation\'s files.'),
    model: setting(z.string().trim().min(1).max(200), 'google/gemini-2.5-flash-image',
      'Image-output model asked for pictures (one whose output modalities include `image` on OpenRouter), through `NUXT_OPENROUTER_BASE_URL` with the person\'s key, else the server\'s. Without a key, the offline demo draws an SVG instead.'),
    maxImageBytes: setting(z.number().int().min(100_000).max(50 * 1024 * 1024), 10 * 1024 * 1024,
      'Largest image kept from the image model (bytes); a larger answer fails the call saying so.'),
    imagesPerAnswer: setting(z.number().int().min(1).max(8), 4,
      'Images kept from one request at most (the rest are dropped).'),
    perHour: setting(z.number().int().min(1).max(10_000), 30,
      'Images one person may ask for per hour (counted on every instance together on Convex); past it the model is told when the next can be made.'),
    timeoutMs: setting(z.number().int().min(5_000).max(600_000), 120_000,
      'Longest one image request may take; past it the call fails and the model is told.'),
  })
}
