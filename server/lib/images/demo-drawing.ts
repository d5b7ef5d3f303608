/**
 * The offline demo's image model: a small SVG scene drawn from the words of a prompt (a sunset over
 * mountains, a house by the sea at night, a purple forest), so images work with no key and no
 * network. An edit reads the scene an earlier drawing keeps in its `<desc>` and changes it by the new
 * words ("add a moon", "remove the sun", "make it night"). Deterministic: the same words, the same
 * picture. Never carries script or links: only shapes, colours and the escaped prompt as its title.
 */

export type SceneElement = 'sun' | 'moon' | 'stars' | 'clouds' | 'mountains' | 'sea' | 'trees' | 'house' | 'boat'
export type TimeOfDay = 'day' | 'sunset' | 'night'

/** What a drawing shows; kept in the SVG so an edit can start from it. */
export interface DemoScene {
  time: TimeOfDay
  elements: SceneElement[]
  /** A colour the person asked for (the ground's, or the sky's at night), as a CSS hex colour. */
  tint?: string
}

const ELEMENT_WORDS: Record<SceneElement, RegExp> = {
  sun: /\bsun(?:ny|shine)?\b/i,
  moon: /\bmoon(?:lit)?\b/i,
  stars: /\bstar(?:s|ry|lit)?\b/i,
  clouds: /\bcloud(?:s|y)?\b/i,
  mountains: /\b(?:mountains?|hills?|peaks?|alps)\b/i,
  sea: /\b(?:sea|ocean|lake|water|beach|coast|river)\b/i,
  trees: /\b(?:trees?|forest|woods?|pines?)\b/i,
  house: /\b(?:house|home|cabin|cottage|hut)\b/i,
  boat: /\b(?:boat|ship|sail(?:ing|boat)?)\b/i,
}

const COLOURS: Record<string, string> = {
  red: '#d64545', orange: '#e8843c', yellow: '#e8c63c', green: '#4f9a4a', blue: '#3d6fd6', purple: '#8a4fd6',
  violet: '#8a4fd6', pink: '#e06aa8', brown: '#8a5a3c', gray: '#8a8a8a', grey: '#8a8a8a', black: '#222222', white: '#f2f2f2',
}

const SKIES: Record<TimeOfDay, [string, string]> = { day: ['#7cc4f5', '#d8f0ff'], sunset: ['#f58a5c', '#ffd39a'], night: ['#0d1b3a', '#2b3f6e'] }

function timeIn(words: string): TimeOfDay | undefined {
  if (/\b(?:night|midnight|dark|moonlit|starry)\b/i.test(words)) return 'night'
  if (/\b(?:sunset|sunrise|dusk|dawn|evening|golden hour)\b/i.test(words)) return 'sunset'
  if (/\b(?:day|daytime|noon|morning|sunny|bright)\b/i.test(words)) return 'day'
  return undefined
}

/** The words after "remove", "without", "no" or "take away": what the person wants gone. */
function removedIn(words: string): string {
  return [...words.matchAll(/\b(?:remove|without|no|take away|delete|get rid of|drop)\s+(?:the\s+|a\s+|an\s+|any\s+)?([a-z]+)/gi)].map(match => match[1]).join(' ')
}

/** The scene `prompt` asks for, starting from `base` (an edit) or from nothing. */
export function sceneFor(prompt: string, base?: DemoScene): DemoScene {
  const words = prompt.slice(0, 2_000)
  const removed = removedIn(words)
  const kept = new Set<SceneElement>(base?.elements ?? [])
  for (const [element, pattern] of Object.entries(ELEMENT_WORDS) as Array<[SceneElement, RegExp]>) {
    if (removed && pattern.test(removed)) kept.delete(element)
    else if (pattern.test(words)) kept.add(element)
  }
  const time = timeIn(words) ?? base?.time ?? (kept.has('moon') || kept.has('stars') ? 'night' : 'day')
  if (!base && kept.size === 0) kept.add('mountains')
  if (!base && time !== 'night' && !kept.has('moon')) kept.add('sun')
  if (time === 'night') kept.delete('sun')
  const colour = /\b(red|orange|yellow|green|blue|purple|violet|pink|brown|gr[ae]y|black|white)\b/i.exec(words)?.[1]?.toLowerCase()
  const order = Object.keys(ELEMENT_WORDS) as SceneElement[]
  return { time, elements: order.filter(element => kept.has(element)), ...(colour ? { tint: COLOURS[colour] } : base?.tint ? { tint: base.tint } : {}) }
}

const escapeXml = (text: string) => text.replace(/[<>&"']/g, char => `&#${char.charCodeAt(0)};`)

const SHAPES: Record<SceneElement, (scene: DemoScene) => string> = {
  sun: scene => `<circle cx="470" cy="${scene.time === 'sunset' ? 250 : 95}" r="46" fill="${scene.time === 'sunset' ? '#ff7a3d' : '#ffd84a'}"/>`,
  moon: () => '<circle cx="470" cy="90" r="38" fill="#f4f1d8"/><circle cx="486" cy="80" r="34" fill="#0d1b3a"/>',
  stars: () => [[60, 50], [140, 90], [220, 40], [300, 110], [380, 60], [560, 130], [90, 150], [520, 30]].map(([x, y]) => `<circle cx="${x}" cy="${y}" r="2.5" fill="#fff8d0"/>`).join(''),
  clouds: () => '<g fill="#ffffff" opacity="0.9"><ellipse cx="150" cy="90" rx="60" ry="22"/><ellipse cx="190" cy="78" rx="40" ry="22"/><ellipse cx="360" cy="130" rx="50" ry="18"/></g>',
  mountains: scene => `<polygon points="0,300 130,130 260,300" fill="${scene.tint ?? '#6b7a8f'}"/><polygon points="170,300 330,100 490,300" fill="${scene.tint ?? '#56657a'}" opacity="0.92"/><polygon points="300,130 330,100 360,130 345,125 330,135 315,125" fill="#ffffff"/>`,
  sea: scene => `<rect x="0" y="300" width="600" height="100" fill="${scene.time === 'night' ? '#13294f' : '#2f7fc1'}"/><path d="M0 330 Q 75 320 150 330 T 300 330 T 450 330 T 600 330" stroke="#ffffff" stroke-width="2" fill="none" opacity="0.5"/>`,
  trees: scene => [60, 110, 520, 560].map(x => `<rect x="${x - 4}" y="300" width="8" height="26" fill="#5a3c22"/><polygon points="${x - 24},305 ${x},240 ${x + 24},305" fill="${scene.tint ?? '#2f6b34'}"/>`).join(''),
  house: () => '<rect x="380" y="250" width="90" height="70" fill="#c9744a"/><polygon points="370,252 425,205 480,252" fill="#7a3b2a"/><rect x="415" y="285" width="20" height="35" fill="#4a2a1a"/><rect x="392" y="265" width="16" height="16" fill="#ffe9a0"/>',
  boat: () => '<polygon points="240,335 330,335 315,352 255,352" fill="#6b3f23"/><polygon points="285,333 285,270 318,330" fill="#ffffff"/>',
}

/** The scene as an SVG image (600×400), its prompt as its title and the scene in its `<desc>` for edits. */
export function drawScene(scene: DemoScene, prompt: string): string {
  const [top, bottom] = SKIES[scene.time]
  const ground = scene.elements.includes('sea') ? '' : `<rect x="0" y="300" width="600" height="100" fill="${scene.time === 'night' ? '#1d3320' : '#5aa250'}"/>`
  const shapes = scene.elements.map(element => SHAPES[element](scene)).join('')
  return `<svg xmlns="http://www.w3.org/2000/svg" width="600" height="400" viewBox="0 0 600 400" role="img"><title>${escapeXml(prompt.slice(0, 300))}</title><desc>or3-demo-scene:${escapeXml(JSON.stringify(scene))}</desc><defs><linearGradient id="sky" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="${top}"/><stop offset="1" stop-color="${bottom}"/></linearGradient></defs><rect width="600" height="400" fill="url(#sky)"/>${ground}${shapes}</svg>`
}

const SCENE_ELEMENTS = new Set(Object.keys(ELEMENT_WORDS))

/** The scene an earlier demo drawing keeps, if `svg` is one. */
export function sceneOf(svg: string): DemoScene | undefined {
  const kept = /<desc>or3-demo-scene:([^<]{1,2000})<\/desc>/.exec(svg.slice(0, 4_000))?.[1]
  if (!kept) return undefined
  try {
    const scene = JSON.parse(kept.replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code)))) as DemoScene
    if (!(scene.time in SKIES) || !Array.isArray(scene.elements)) return undefined
    return { time: scene.time, elements: scene.elements.filter(element => SCENE_ELEMENTS.has(element)), ...(typeof scene.tint === 'string' && /^#[0-9a-f]{6}$/.test(scene.tint) ? { tint: scene.tint } : {}) }
  } catch {
    return undefined
  }
}

/** A few words describing the drawing, as the demo model says them. */
export function describeScene(scene: DemoScene): string {
  const names = scene.elements.map(element => ({ sun: 'the sun', moon: 'the moon', stars: 'stars', clouds: 'clouds', mountains: 'mountains', sea: 'the sea', trees: 'trees', house: 'a house', boat: 'a boat' })[element])
  const list = names.length > 1 ? `${names.slice(0, -1).join(', ')} and ${names.at(-1)}` : names[0] ?? 'an empty sky'
  return `${list}, ${scene.time === 'day' ? 'by day' : scene.time === 'sunset' ? 'at sunset' : 'at night'}`
}
