/**
 * How the offline demo model reads what people write: places (with trailing words such as "right
 * now" or "please", multi-word cities and their nicknames), numbers in words, arithmetic in words
 * ("15% of 240", "square root of 144", "twelve times seven"), unit conversions ("10 km to miles",
 * "how many feet in 3 meters") and °C/°F requests. Every rule is a plain scan or a regular
 * expression without nested repetition over text the planner has already cut to a bounded prefix.
 */

/** City (lower case, as people write it) → IANA zone and the name to show. */
const CITIES: Record<string, { zone: string, name: string }> = {}
function city(names: string[], zone: string, shown?: string): void {
  for (const name of names) CITIES[name] = { zone, name: shown ?? name.replace(/\b\p{L}/gu, letter => letter.toUpperCase()) }
}
city(['tokyo', 'osaka', 'kyoto'], 'Asia/Tokyo')
city(['seoul'], 'Asia/Seoul')
city(['beijing', 'shanghai', 'shenzhen'], 'Asia/Shanghai')
city(['hong kong'], 'Asia/Hong_Kong')
city(['singapore'], 'Asia/Singapore')
city(['bangkok'], 'Asia/Bangkok')
city(['hanoi', 'ho chi minh city', 'saigon'], 'Asia/Ho_Chi_Minh')
city(['manila'], 'Asia/Manila')
city(['jakarta'], 'Asia/Jakarta')
city(['delhi', 'new delhi', 'mumbai', 'bangalore', 'bengaluru', 'kolkata', 'chennai'], 'Asia/Kolkata')
city(['karachi'], 'Asia/Karachi')
city(['dubai', 'abu dhabi'], 'Asia/Dubai')
city(['tehran'], 'Asia/Tehran')
city(['tel aviv', 'jerusalem'], 'Asia/Jerusalem')
city(['istanbul'], 'Europe/Istanbul')
city(['moscow'], 'Europe/Moscow')
city(['kyiv', 'kiev'], 'Europe/Kyiv', 'Kyiv')
city(['cairo'], 'Africa/Cairo')
city(['nairobi'], 'Africa/Nairobi')
city(['lagos'], 'Africa/Lagos')
city(['johannesburg', 'cape town'], 'Africa/Johannesburg')
city(['athens'], 'Europe/Athens')
city(['helsinki'], 'Europe/Helsinki')
city(['berlin', 'munich', 'hamburg', 'frankfurt'], 'Europe/Berlin')
city(['paris'], 'Europe/Paris')
city(['rome', 'milan'], 'Europe/Rome')
city(['madrid', 'barcelona'], 'Europe/Madrid')
city(['amsterdam'], 'Europe/Amsterdam')
city(['brussels'], 'Europe/Brussels')
city(['zurich', 'geneva'], 'Europe/Zurich')
city(['vienna'], 'Europe/Vienna')
city(['prague'], 'Europe/Prague')
city(['copenhagen'], 'Europe/Copenhagen')
city(['stockholm'], 'Europe/Stockholm')
city(['oslo'], 'Europe/Oslo')
city(['warsaw'], 'Europe/Warsaw')
city(['london', 'manchester', 'edinburgh'], 'Europe/London')
city(['dublin'], 'Europe/Dublin')
city(['lisbon', 'porto'], 'Europe/Lisbon')
city(['reykjavik'], 'Atlantic/Reykjavik')
city(['sao paulo', 'rio', 'rio de janeiro'], 'America/Sao_Paulo')
city(['buenos aires'], 'America/Argentina/Buenos_Aires')
city(['santiago'], 'America/Santiago')
city(['lima'], 'America/Lima')
city(['bogota'], 'America/Bogota')
city(['new york', 'new york city', 'nyc', 'brooklyn', 'manhattan'], 'America/New_York', 'New York')
city(['boston', 'washington', 'washington dc', 'philadelphia', 'atlanta', 'miami'], 'America/New_York')
city(['toronto', 'montreal'], 'America/Toronto')
city(['chicago', 'dallas', 'houston', 'austin'], 'America/Chicago')
city(['mexico city'], 'America/Mexico_City')
city(['denver'], 'America/Denver')
city(['phoenix'], 'America/Phoenix')
city(['los angeles', 'san francisco', 'sf', 'seattle', 'san diego', 'las vegas', 'portland'], 'America/Los_Angeles')
city(['vancouver'], 'America/Vancouver')
city(['honolulu'], 'Pacific/Honolulu')
city(['anchorage'], 'America/Anchorage')
city(['sydney'], 'Australia/Sydney')
city(['melbourne'], 'Australia/Melbourne')
city(['brisbane'], 'Australia/Brisbane')
city(['perth'], 'Australia/Perth')
city(['auckland', 'wellington'], 'Pacific/Auckland')
city(['utc', 'gmt'], 'UTC', 'UTC')
CITIES.sf!.name = 'San Francisco'
CITIES.nyc!.name = 'New York'
CITIES['washington dc']!.name = 'Washington, D.C.'

/** Longest names first, so "new york city" wins over "new york". */
const CITY_NAMES = Object.keys(CITIES).sort((a, b) => b.length - a.length)

/** Lower case, letters and digits only, single spaces, padded: " what time is it in new york ". */
export function normalise(text: string): string {
  return ` ${text.toLowerCase().normalize('NFD').replace(/[\u0300-\u036F]/g, '').replace(/[^a-z0-9/_]+/g, ' ').trim()} `
}

/** A known city named in the text (the longest match), if any. */
export function knownCity(text: string): { zone: string, name: string } | undefined {
  const haystack = normalise(text)
  for (const name of CITY_NAMES) if (haystack.includes(` ${name} `)) return CITIES[name]
  return undefined
}

/** Words that may follow a place without being part of it. */
const TRAILING = new Set(['now', 'right', 'today', 'tonight', 'tomorrow', 'currently', 'please', 'pls', 'thanks', 'there', 'then', 'at', 'the', 'moment', 'atm', 'like', 'is', 'be', 'going', 'to', 'in', 'it', 'outside'])

/**
 * The place a clause names: a known city anywhere in it, else the words after "in", "for" or "at"
 * with trailing words ("right now", "please", "there") left out. `undefined` when it names none.
 */
export function placeIn(clause: string): { name: string, zone?: string } | undefined {
  const known = knownCity(clause)
  if (known) return known
  const zone = /\b([A-Z][a-z]+\/[A-Za-z_]+(?:\/[A-Za-z_]+)?)\b/.exec(clause)?.[1]
  if (zone) return { name: zone, zone }
  const after = /\b(?:in|for|at|of)\s+([^?.!,;]{1,80})/i.exec(clause)?.[1]
  if (!after) return undefined
  const words = after.trim().split(/\s+/)
  while (words.length > 0 && TRAILING.has(words.at(-1)!.toLowerCase())) words.pop()
  const first = words[0]?.toLowerCase()
  if (!first || ['the', 'a', 'my', 'here', 'there', 'it', 'that', 'this', 'me', 'you'].includes(first)) return undefined
  const name = words.slice(0, 4).join(' ').replace(/\b\p{L}/gu, letter => letter.toUpperCase())
  return /\p{L}/u.test(name) ? { name } : undefined
}

/** °C or °F when the clause asks for one; its mention removed. */
export function temperatureUnitIn(clause: string): { unit?: 'celsius' | 'fahrenheit', rest: string } {
  let unit: 'celsius' | 'fahrenheit' | undefined
  const rest = clause.replace(/\b(?:in\s+)?(?:degrees\s+)?(celsius|centigrade|fahrenheit|metric|imperial)\b|(?:in\s+)?°\s*([cf])\b/gi, (_match, word?: string, letter?: string) => {
    const said = (word ?? letter ?? '').toLowerCase()
    unit = said === 'f' || said === 'fahrenheit' || said === 'imperial' ? 'fahrenheit' : 'celsius'
    return ' '
  })
  return { unit, rest }
}

const SMALL: Record<string, number> = {
  zero: 0, one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10, eleven: 11, twelve: 12,
  thirteen: 13, fourteen: 14, fifteen: 15, sixteen: 16, seventeen: 17, eighteen: 18, nineteen: 19,
  twenty: 20, thirty: 30, forty: 40, fifty: 50, sixty: 60, seventy: 70, eighty: 80, ninety: 90,
}
const SCALES: Record<string, number> = { hundred: 100, thousand: 1_000, million: 1_000_000, billion: 1_000_000_000 }

/** "twelve times seven" → "12 times 7"; "one hundred and five" → "105"; "a dozen" → "12". */
export function wordsToDigits(text: string): string {
  const tokens = text.replace(/\ba dozen\b/gi, '12').replace(/\bdozen\b/gi, '12').split(/(\s+|-)/)
  const out: string[] = []
  let total = 0
  let current = 0
  let inNumber = false
  let pending: string[] = []
  const flush = () => {
    if (inNumber) out.push(String(total + current))
    else out.push(...pending)
    pending = []
    total = 0
    current = 0
    inNumber = false
  }
  for (const token of tokens) {
    const word = token.toLowerCase()
    if (/^(?:\s+|-)$/.test(token)) {
      if (inNumber) pending.push(token)
      else out.push(token)
      continue
    }
    if (word in SMALL) {
      current += SMALL[word]!
      inNumber = true
      pending = []
    } else if (word in SCALES && (inNumber || word === 'hundred')) {
      const scale = SCALES[word]!
      if (!inNumber) current = 1
      if (scale === 100) current *= 100
      else {
        total += (current || 1) * scale
        current = 0
      }
      inNumber = true
      pending = []
    } else if (word === 'and' && inNumber) {
      pending.push(token)
    } else {
      if (inNumber) {
        out.push(String(total + current), ...pending)
        pending = []
        total = 0
        current = 0
        inNumber = false
      }
      out.push(token)
    }
  }
  flush()
  return out.join('')
}

const NUMBER = String.raw`-?\d+(?:\.\d+)?`

/**
 * Arithmetic said in words, as the calculator writes it: "15% of 240" → "15 / 100 * 240",
 * "square root of 144" → "sqrt(144)", "7 squared" → "7^2", "twelve times seven" → "12 * 7".
 */
export function arithmeticFromWords(text: string): string {
  return wordsToDigits(text)
    // Money is a number: "$45", "€12.50", "60 dollars", "1,200".
    .replace(/[$€£¥]\s?(?=\d)/g, '')
    .replace(/(\d)\s*(?:dollars?|bucks|euros?|usd|eur|gbp)\b/gi, '$1')
    .replace(/(\d),(?=\d{3}\b)/g, '$1')
    // A tip is a share of the bill; a discount takes its share off the price.
    .replace(new RegExp(String.raw`(${NUMBER})\s*(?:%|percent|per cent)\s+tip\s+(?:on|for|of)\s+(?:a\s+|the\s+)?(?:bill\s+of\s+)?(${NUMBER})`, 'gi'), '($1 / 100 * $2)')
    .replace(new RegExp(String.raw`\btip\s+of\s+(${NUMBER})\s*(?:%|percent|per cent)\s+(?:on|for)\s+(?:a\s+|the\s+)?(${NUMBER})`, 'gi'), '($1 / 100 * $2)')
    .replace(new RegExp(String.raw`(${NUMBER})\s*(?:%|percent|per cent)\s+(?:off|discount\s+(?:on|off|from|of))\s+(?:of\s+)?(${NUMBER})`, 'gi'), '($2 - $1 / 100 * $2)')
    .replace(new RegExp(String.raw`\bsqrt\s+(${NUMBER})`, 'gi'), 'sqrt($1)')
    .replace(new RegExp(String.raw`(${NUMBER})\s*(?:%|percent|per cent)\s+of\s+(${NUMBER})`, 'gi'), '($1 / 100 * $2)')
    .replace(new RegExp(String.raw`(?:the\s+)?square\s+root\s+of\s+(${NUMBER})`, 'gi'), 'sqrt($1)')
    .replace(new RegExp(String.raw`(?:the\s+)?cube\s+root\s+of\s+(${NUMBER})`, 'gi'), 'cbrt($1)')
    .replace(new RegExp(String.raw`half\s+of\s+(${NUMBER})`, 'gi'), '($1 / 2)')
    .replace(new RegExp(String.raw`(${NUMBER})\s+squared`, 'gi'), '$1^2')
    .replace(new RegExp(String.raw`(${NUMBER})\s+cubed`, 'gi'), '$1^3')
    .replace(/\s+(?:to the power of|raised to(?: the power of)?|to the)\s+/gi, ' ^ ')
    .replace(/\s+(?:multiplied by|times|x)\s+/gi, ' * ')
    .replace(/\s+(?:divided by|over)\s+/gi, ' / ')
    .replace(/\s+(?:plus|and)\s+(?=-?\d)/gi, ' + ')
    .replace(/\s+(?:minus|less)\s+/gi, ' - ')
    .replace(/\s+(?:mod|modulo)\s+/gi, ' % ')
}

/** A unit as people write it → the unit `convert_units` takes. */
const UNITS: Record<string, string> = {
  'km': 'km', 'kilometer': 'km', 'kilometers': 'km', 'kilometre': 'km', 'kilometres': 'km', 'kms': 'km',
  'm': 'm', 'meter': 'm', 'meters': 'm', 'metre': 'm', 'metres': 'm',
  'cm': 'cm', 'centimeter': 'cm', 'centimeters': 'cm', 'centimetre': 'cm', 'centimetres': 'cm',
  'mm': 'mm', 'millimeter': 'mm', 'millimeters': 'mm', 'millimetre': 'mm', 'millimetres': 'mm',
  'mi': 'mi', 'mile': 'mi', 'miles': 'mi',
  'ft': 'ft', 'foot': 'ft', 'feet': 'ft',
  'in': 'in', 'inch': 'in', 'inches': 'in',
  'yd': 'yd', 'yard': 'yd', 'yards': 'yd',
  'kg': 'kg', 'kilo': 'kg', 'kilos': 'kg', 'kilogram': 'kg', 'kilograms': 'kg', 'kilogramme': 'kg', 'kilogrammes': 'kg',
  'g': 'g', 'gram': 'g', 'grams': 'g', 'gramme': 'g', 'grammes': 'g',
  'lb': 'lb', 'lbs': 'lb', 'pound': 'lb', 'pounds': 'lb',
  'oz': 'oz', 'ounce': 'oz', 'ounces': 'oz',
  'l': 'l', 'liter': 'l', 'liters': 'l', 'litre': 'l', 'litres': 'l',
  'ml': 'ml', 'milliliter': 'ml', 'milliliters': 'ml', 'millilitre': 'ml', 'millilitres': 'ml',
  'gal': 'gal', 'gallon': 'gal', 'gallons': 'gal',
  'c': 'c', '°c': 'c', 'celsius': 'c', 'centigrade': 'c',
  'f': 'f', '°f': 'f', 'fahrenheit': 'f',
  'k': 'k', 'kelvin': 'k',
  'km/h': 'km/h', 'kph': 'km/h', 'kmh': 'km/h',
  'mph': 'mph',
  'm/s': 'm/s',
  'kn': 'kn', 'knot': 'kn', 'knots': 'kn',
}

/** What each unit measures: a conversion is between units of one kind. */
const UNIT_KINDS: Record<string, string> = {
  km: 'length', m: 'length', cm: 'length', mm: 'length', mi: 'length', ft: 'length', in: 'length', yd: 'length',
  kg: 'weight', g: 'weight', lb: 'weight', oz: 'weight',
  l: 'volume', ml: 'volume', gal: 'volume',
  c: 'temperature', f: 'temperature', k: 'temperature',
  'km/h': 'speed', 'mph': 'speed', 'm/s': 'speed', 'kn': 'speed',
}

/** The kind of quantity a unit (as `convert_units` takes it) measures: length, weight, volume, temperature, speed. */
export function unitKind(unit: string): string | undefined {
  return UNIT_KINDS[unit]
}

function unitOf(word: string): string | undefined {
  return UNITS[word.toLowerCase().replace(/^degrees?\s+/, '').replace(/^°\s*/, '°')]
}

const UNIT_WORD = String.raw`(?:degrees?\s+)?°?\s?[a-z]+(?:/[a-z]+)?`

/** "convert 10 km to miles", "10 km in miles", "how many feet in 3 meters", "100 F in C". */
export function conversionIn(clause: string): { value: number, from: string, to: string } | undefined {
  const text = wordsToDigits(clause).replace(/miles per hour/gi, 'mph').replace(/kilometers per hour|kilometres per hour/gi, 'km/h')
  const direct = new RegExp(String.raw`(${NUMBER})\s*(${UNIT_WORD})\s+(?:to|in|into|as|=)\s+(${UNIT_WORD})\b`, 'i').exec(text)
  if (direct) {
    const from = unitOf(direct[2]!.trim())
    const to = unitOf(direct[3]!.trim())
    if (from && to) return { value: Number(direct[1]), from, to }
  }
  const howMany = new RegExp(String.raw`how\s+many\s+(${UNIT_WORD})\s+(?:are\s+in|is\s+in|are\s+there\s+in|in|is|are|make|makes)\s+(?:a\s+|an\s+|one\s+)?(${NUMBER})?\s*(${UNIT_WORD})\b`, 'i').exec(text)
  if (howMany) {
    const to = unitOf(howMany[1]!.trim())
    const from = unitOf(howMany[3]!.trim())
    if (from && to) return { value: howMany[2] ? Number(howMany[2]) : 1, from, to }
  }
  return undefined
}
