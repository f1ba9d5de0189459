/**
 * The JSON text Go's encoding/json writes, which crictl's output is made of: how it quotes strings
 * (json.Marshal escapes <, > and & for HTML, and U+2028/U+2029), how it orders map keys (by their
 * UTF-8 bytes), how json.Indent lays a document out (every whitespace outside strings dropped, then
 * one entry a line, empty objects and arrays kept as {} and []), and how time.Time's RFC3339Nano
 * reads. Byte-for-byte output depends on each of these.
 */

const GO_ESCAPES: Record<string, string> = {
  '<': String.raw`\u003c`,
  '>': String.raw`\u003e`,
  '&': String.raw`\u0026`,
  '\u2028': String.raw`\u2028`,
  '\u2029': String.raw`\u2029`,
}

/**
 * A string as json.Marshal quotes it (Go 1.22: \b, \f, \n, \r, \t by name, other control characters
 * as \u00xx, which is JSON.stringify's rule), plus Go's HTML escapes.
 */
export function goJsonString(value: string): string {
  return JSON.stringify(value).replaceAll(/[<>&\u2028\u2029]/g, (char) => GO_ESCAPES[char])
}

/** Go's string order (byte-wise over UTF-8), which differs from JS's UTF-16 order only past U+FFFF. */
export function compareGoStrings(a: string, b: string): number {
  if (a === b) return 0
  const ascii = /^[ -~]*$/
  if (ascii.test(a) && ascii.test(b)) return a < b ? -1 : 1
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'))
}

/**
 * json.Marshal of what json.Unmarshal made of a document (maps with sorted keys, float64 numbers,
 * strings, booleans, null), compact. crictl re-marshals its statuses this way (marshalMapInOrder).
 */
export function goMarshal(value: unknown): string {
  if (value === null || value === undefined) return 'null'
  if (typeof value === 'string') return goJsonString(value)
  // float64 in Go: 'f' notation between 1e-6 and 1e21, else the shortest 'e' form; JS uses the same cut-offs.
  if (typeof value === 'number') return Object.is(value, -0) ? '-0' : String(value)
  if (typeof value === 'boolean') return value ? 'true' : 'false'
  if (Array.isArray(value)) return `[${value.map((item) => goMarshal(item)).join(',')}]`
  const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => compareGoStrings(a, b))
  return `{${entries.map(([key, item]) => `${goJsonString(key)}:${goMarshal(item)}`).join(',')}}`
}

/** Whether Go's json.Unmarshal would take the text (crictl then inserts it as JSON, else as a string). */
export function isJson(text: string): boolean {
  try {
    JSON.parse(text)
    return true
  } catch {
    return false
  }
}

const WHITESPACE = new Set([' ', '\t', '\n', '\r'])

/** json.Indent(src, "", "  "): the same tokens, one entry a line, `{}` and `[]` for empty ones. */
export function goIndent(source: string): string {
  if (!isJson(source)) throw new SyntaxError('crictl JSON: the document is not valid JSON (a runtime info value broke it)')
  let out = ''
  let depth = 0
  let pendingNewline = false
  const newline = () => `\n${'  '.repeat(depth)}`
  for (let i = 0; i < source.length; i++) {
    const char = source[i]
    if (WHITESPACE.has(char)) continue
    if (pendingNewline) {
      pendingNewline = false
      if (char === '}' || char === ']') {
        depth--
        out += char
        continue
      }

      out += newline()
    }

    switch (char) {
      case '"': {
        let end = i + 1
        while (source[end] !== '"') end += source[end] === '\\' ? 2 : 1
        out += source.slice(i, end + 1)
        i = end

        break
      }

      case '{':
      case '[': {
        out += char
        depth++
        pendingNewline = true

        break
      }

      case '}':
      case ']': {
        depth--
        out += newline() + char

        break
      }

      case ',': {
        out += ',' + newline()

        break
      }

      case ':': {
        out += ': '

        break
      }

      default: {
        out += char
      }
    }
  }

  return out
}

/**
 * time.Unix(0, nanos).Format(time.RFC3339Nano) in the local time zone, as crictl writes the
 * timestamps of inspect: trailing zeros of the fraction dropped, "Z" for UTC, else ±hh:mm.
 * `undefined` is Go's zero time.Time, "0001-01-01T00:00:00Z".
 */
export function goRfc3339Nano(nanos: string | bigint | undefined): string {
  if (nanos === undefined) return '0001-01-01T00:00:00Z'
  const value = BigInt(nanos)
  let seconds = value / 1_000_000_000n
  let fraction = value % 1_000_000_000n
  if (fraction < 0n) {
    fraction += 1_000_000_000n
    seconds -= 1n
  }

  const ms = Number(seconds) * 1000
  const offsetMinutes = -new Date(ms).getTimezoneOffset()
  const local = new Date(ms + offsetMinutes * 60_000).toISOString().slice(0, 19)
  const digits = fraction.toString().padStart(9, '0').replace(/0+$/, '')
  const zone =
    offsetMinutes === 0
      ? 'Z'
      : `${offsetMinutes < 0 ? '-' : '+'}${twoDigits(Math.floor(Math.abs(offsetMinutes) / 60))}:${twoDigits(Math.abs(offsetMinutes) % 60)}`
  return `${local}${digits ? `.${digits}` : ''}${zone}`
}

function twoDigits(value: number): string {
  return String(value).padStart(2, '0')
}
