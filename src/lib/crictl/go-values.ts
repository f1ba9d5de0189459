/**
 * The Go values a crictl template sees and how fmt prints them: JSON decoded as encoding/json does with
 * UseNumber (objects are map[string]interface {}, arrays []interface {}, numbers json.Number, null a nil
 * interface), plus the ints and floats templates make themselves. `undefined` is Go's invalid value
 * (nothing at all), `null` an interface holding nil.
 */

/** encoding/json's json.Number: the number's text, with its String, Int64 and Float64 methods. */
export class GoNumber {
  constructor(readonly text: string) {}

  method(name: string): GoValue | undefined {
    if (name === 'String') return this.text
    if (name === 'Float64') return new GoFloat(Number(this.text))
    if (name === 'Int64') return Number.parseInt(this.text, 10)
    return undefined
  }
}

/** A float64 a template computed (a Go int is a JS number; a float keeps its type for printing). */
export class GoFloat {
  constructor(readonly value: number) {}
}

export type GoValue = undefined | null | boolean | number | string | GoNumber | GoFloat | GoValue[] | {[key: string]: GoValue}

/** json.Decoder with UseNumber over a JSON text. */
export function parseGoJson(text: string): GoValue {
  let at = 0
  const space = () => {
    while (at < text.length && ' \t\n\r'.includes(text[at])) at++
  }

  const value = (): GoValue => {
    space()
    const char = text[at]
    if (char === '{') {
      at++
      const object: Record<string, GoValue> = {}
      space()
      if (text[at] === '}') {
        at++
        return object
      }

      for (;;) {
        space()
        const key = value() as string
        space()
        at++ // ':'
        object[key] = value()
        space()
        if (text[at++] === '}') return object
      }
    }

    if (char === '[') {
      at++
      const array: GoValue[] = []
      space()
      if (text[at] === ']') {
        at++
        return array
      }

      for (;;) {
        array.push(value())
        space()
        if (text[at++] === ']') return array
      }
    }

    if (char === '"') {
      let end = at + 1
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1
      const string = JSON.parse(text.slice(at, end + 1)) as string
      at = end + 1
      return string
    }

    const literal = /^(?:true|false|null|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)/.exec(text.slice(at))![0]
    at += literal.length
    if (literal === 'true' || literal === 'false') return literal === 'true'
    return literal === 'null' ? null : new GoNumber(literal)
  }

  return value()
}

/** The Go type a value has, as reflect names it in template errors. */
export function goTypeName(value: GoValue): string {
  if (value === undefined || value === null) return 'interface {}'
  if (Array.isArray(value)) return '[]interface {}'
  if (value instanceof GoNumber) return 'json.Number'
  if (value instanceof GoFloat) return 'float64'
  if (typeof value === 'object') return 'map[string]interface {}'
  if (typeof value === 'number') return 'int'
  return typeof value === 'boolean' ? 'bool' : 'string'
}

/** strconv.FormatFloat(f, 'g', -1, 64), as fmt's %v prints a float64. */
export function goFloatText(value: number): string {
  if (Number.isNaN(value)) return 'NaN'
  if (!Number.isFinite(value)) return value > 0 ? '+Inf' : '-Inf'
  if (value === 0) return Object.is(value, -0) ? '-0' : '0'
  const exponent = Math.floor(Math.log10(Math.abs(value)))
  if (exponent < -4 || exponent >= 6) {
    const [mantissa, power] = value.toExponential().split('e')
    const sign = power.startsWith('-') ? '-' : '+'
    return `${mantissa}e${sign}${power.replace(/^[+-]/, '').padStart(2, '0')}`
  }

  return String(value)
}

/** fmt's %v of a value (Sprint of one operand): maps as map[k:v] with sorted keys, lists as [a b], nil as <nil>. */
export function goValueText(value: GoValue): string {
  if (value === undefined) return '<invalid reflect.Value>'
  if (value === null) return '<nil>'
  if (value instanceof GoNumber) return value.text
  if (value instanceof GoFloat) return goFloatText(value.value)
  if (Array.isArray(value)) return `[${value.map((item) => goValueText(item)).join(' ')}]`
  if (typeof value === 'object') {
    const keys = Object.keys(value).sort()
    return `map[${keys.map((key) => `${key}:${goValueText(value[key])}`).join(' ')}]`
  }

  return String(value)
}

/** text/template's isTrue: empty strings, maps and lists, zero numbers, false and nil are false. */
export function truthOf(value: GoValue): boolean {
  if (value === undefined || value === null) return false
  if (value instanceof GoNumber) return value.text !== ''
  if (value instanceof GoFloat) return value.value !== 0
  if (Array.isArray(value)) return value.length > 0
  if (typeof value === 'object') return Object.keys(value).length > 0
  if (typeof value === 'number') return value !== 0
  return typeof value === 'string' ? value !== '' : value
}
