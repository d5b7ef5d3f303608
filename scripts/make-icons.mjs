// Draws the app's icons (public/favicon.svg's design: a white speech bubble on a blue rounded
// square) as the PNGs an installed app needs: `node scripts/make-icons.mjs`. No image library: a
// few shapes, each pixel sampled 4×4 for smooth edges, written as PNG with node:zlib.
import { deflateSync } from 'node:zlib'
import { writeFileSync } from 'node:fs'

const BLUE = [0x2f, 0x6f, 0xeb]
const WHITE = [0xff, 0xff, 0xff]

/** The bubble in the favicon's 32-unit square: M8 11h16v9H15l-5 4v-4H8z. */
const BUBBLE = [[8, 11], [24, 11], [24, 20], [15, 20], [10, 24], [10, 20], [8, 20]]

function insidePolygon(x, y, points) {
  let inside = false
  for (let i = 0, j = points.length - 1; i < points.length; j = i++) {
    const [xi, yi] = points[i]
    const [xj, yj] = points[j]
    if ((yi > y) !== (yj > y) && x < ((xj - xi) * (y - yi)) / (yj - yi) + xi) inside = !inside
  }
  return inside
}

function insideRoundedSquare(x, y, radius) {
  const cx = Math.min(Math.max(x, radius), 32 - radius)
  const cy = Math.min(Math.max(y, radius), 32 - radius)
  return (x - cx) ** 2 + (y - cy) ** 2 <= radius ** 2
}

/** RGBA pixels of the icon at `size`; `maskable`: full-bleed blue, the bubble within the middle 80% (the safe zone). */
function draw(size, maskable) {
  const pixels = Buffer.alloc(size * size * 4)
  const scale = maskable ? 0.8 : 1
  for (let py = 0; py < size; py++) {
    for (let px = 0; px < size; px++) {
      let square = 0
      let bubble = 0
      for (let sy = 0; sy < 4; sy++) {
        for (let sx = 0; sx < 4; sx++) {
          const x = ((px + (sx + 0.5) / 4) / size) * 32
          const y = ((py + (sy + 0.5) / 4) / size) * 32
          if (maskable || insideRoundedSquare(x, y, 7)) square++
          const bx = 16 + (x - 16) / scale
          const by = 16 + (y - 16) / scale
          if (insidePolygon(bx, by, BUBBLE)) bubble++
        }
      }
      const cover = square / 16
      const white = bubble / 16
      const offset = (py * size + px) * 4
      for (let channel = 0; channel < 3; channel++) pixels[offset + channel] = Math.round(BLUE[channel] * (1 - white) + WHITE[channel] * white)
      pixels[offset + 3] = Math.round(255 * Math.max(cover, white))
    }
  }
  return pixels
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
  return c >>> 0
})
function crc32(buffer) {
  let c = 0xffffffff
  for (const byte of buffer) c = CRC_TABLE[(c ^ byte) & 0xff] ^ (c >>> 8)
  return (c ^ 0xffffffff) >>> 0
}
function chunk(type, data) {
  const length = Buffer.alloc(4)
  length.writeUInt32BE(data.length)
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data])
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(body))
  return Buffer.concat([length, body, crc])
}
function png(size, pixels) {
  const header = Buffer.alloc(13)
  header.writeUInt32BE(size, 0)
  header.writeUInt32BE(size, 4)
  header.set([8, 6, 0, 0, 0], 8) // 8-bit RGBA
  const rows = Buffer.alloc(size * (size * 4 + 1))
  for (let y = 0; y < size; y++) pixels.copy(rows, y * (size * 4 + 1) + 1, y * size * 4, (y + 1) * size * 4)
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', header), chunk('IDAT', deflateSync(rows, { level: 9 })), chunk('IEND', Buffer.alloc(0))])
}

const icons = [['icon-192.png', 192, false], ['icon-512.png', 512, false], ['icon-maskable-512.png', 512, true], ['apple-touch-icon-180.png', 180, true]]
for (const [name, size, maskable] of icons) writeFileSync(new URL(`../public/icons/${name}`, import.meta.url), png(size, draw(size, maskable)))
console.log(`wrote ${icons.length} icons to public/icons/`)
