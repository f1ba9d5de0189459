/**
 * The functions crictl's templates can call: text/template's builtins (and, or, not, len, index,
 * slice, eq, ne, lt, le, gt, ge, print, printf, println, html, js, urlquery) and crictl's own json,
 * title, lower and upper, with Go's results and error words for the values JSON gives them.
 */
import {goFormat} from './go-printf.js'
import {GoFloat, GoNumber, goTypeName, type GoValue, goValueText, truthOf} from './go-values.js'
import {compareGoStrings, goJsonString, goMarshal} from './go-json.js'

type Builtin = (args: GoValue[]) => GoValue

type BasicKind = 'invalid' | 'bool' | 'int' | 'float' | 'string' | 'other'

function basicKind(value: GoValue): BasicKind {
  if (value === undefined || value === null) return 'invalid'
  if (typeof value === 'boolean') return 'bool'
  if (typeof value === 'number') return 'int'
  if (value instanceof GoFloat) return 'float'
  if (typeof value === 'string' || value instanceof GoNumber) return 'string'
  return 'other'
}

function scalar(value: GoValue): string | number | boolean {
  if (value instanceof GoNumber) return value.text
  if (value instanceof GoFloat) return value.value
  return value as string | number | boolean
}

function eq(args: GoValue[]): boolean {
  const [first, ...others] = args
  if (others.length === 0) throw new Error('missing argument for comparison')
  const k1 = basicKind(first)
  for (const other of others) {
    const k2 = basicKind(other)
    if (k1 !== k2) {
      if (k1 !== 'invalid' && k2 !== 'invalid') throw new Error('incompatible types for comparison')
      continue
    }

    if (k1 === 'other') throw new Error(`non-comparable type ${goValueText(first)}: ${goTypeName(first)}`)
    if (k1 === 'invalid' || scalar(first) === scalar(other)) return true
  }

  return false
}

function lt(args: GoValue[]): boolean {
  const [a, b] = args
  const [k1, k2] = [basicKind(a), basicKind(b)]
  if (k1 !== k2) throw new Error('incompatible types for comparison')
  if (k1 === 'bool' || k1 === 'invalid' || k1 === 'other') throw new Error('invalid type for comparison')
  return scalar(a) < scalar(b)
}

function arity(name: string, args: GoValue[], count: number): void {
  if (args.length !== count) throw new Error(`wrong number of args for ${name}: want ${count} got ${args.length}`)
}

function length(args: GoValue[]): number {
  arity('len', args, 1)
  const [value] = args
  if (typeof value === 'string') return Buffer.byteLength(value)
  if (value instanceof GoNumber) return value.text.length
  if (Array.isArray(value)) return value.length
  if (value !== null && typeof value === 'object' && !(value instanceof GoFloat)) return Object.keys(value).length
  throw new Error(`len of type ${goTypeName(value)}`)
}

function indexArg(value: GoValue, size: number): number {
  if (typeof value !== 'number') throw new Error(`cannot index slice/array with type ${goTypeName(value)}`)
  if (value < 0 || value >= size) throw new Error(`index out of range: ${value}`)
  return value
}

function index(args: GoValue[]): GoValue {
  if (args.length === 0) throw new Error('wrong number of args for index: want at least 1 got 0')
  let [item] = args
  for (const key of args.slice(1)) {
    if (item === undefined || item === null) throw new Error('index of untyped nil')
    if (Array.isArray(item)) item = item[indexArg(key, item.length)]
    else if (typeof item === 'object' && !(item instanceof GoNumber) && !(item instanceof GoFloat)) {
      if (typeof key !== 'string') throw new Error(`value has type ${goTypeName(key)}; should be string`)
      // A missing key is the map's zero value: a nil interface, which prints <no value>.
      item = Object.hasOwn(item, key) ? item[key] : null
    } else if (typeof item === 'string') item = Buffer.from(item)[indexArg(key, Buffer.byteLength(item))]
    else throw new Error(`can't index item of type ${goTypeName(item)}`)
  }

  return item
}

function slice(args: GoValue[]): GoValue {
  const [item, ...bounds] = args
  if (bounds.some((bound) => typeof bound !== 'number')) throw new Error('cannot index slice/array with nil')
  const [from = 0, to] = bounds as number[]
  if (typeof item === 'string') return item.slice(from, to)
  if (Array.isArray(item)) return item.slice(from, to)
  throw new Error(`can't slice item of type ${goTypeName(item)}`)
}

/** fmt.Sprint: a space between two operands when neither is a string. */
function sprint(args: GoValue[]): string {
  let out = ''
  for (const [i, arg] of args.entries()) {
    const isString = (value: GoValue) => typeof value === 'string'
    if (i > 0 && !isString(arg) && !isString(args[i - 1])) out += ' '
    out += goValueText(arg)
  }

  return out
}

function stringArg(name: string, args: GoValue[]): string {
  arity(name, args, 1)
  const [value] = args
  if (typeof value !== 'string') throw new Error(`wrong type for value; expected string; got ${goTypeName(value)}`)
  return value
}

function htmlEscape(text: string): string {
  return text.replaceAll(
    /[<>&'"\0]/g,
    (char) => ({'<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&#39;', '"': '&#34;', '\0': '\uFFFD'})[char]!,
  )
}

function jsEscape(text: string): string {
  return text.replaceAll(/[\\'"<>&=\n\r\t]/g, (char) => {
    const names: Record<string, string> = {
      '\\': '\\\\',
      "'": String.raw`\'`,
      '"': String.raw`\"`,
      '\n': String.raw`\n`,
      '\r': String.raw`\r`,
      '\t': String.raw`\t`,
    }
    return names[char] ?? `\\u${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`
  })
}

/** cases.Title(language.Und, cases.NoLower): each word's first letter upper-cased, the rest left as it is. */
function title(text: string): string {
  return text.replaceAll(/(^|[^\p{L}\p{N}_'])(\p{L})/gu, (_, before: string, letter: string) => before + letter.toUpperCase())
}

/** crictl's json function: encoding/json's Encoder.Encode, compact, HTML-escaped, with a newline. */
function json(args: GoValue[]): string {
  arity('json', args, 1)
  return `${marshal(args[0])}\n`
}

/** json.Marshal of a template value: a json.Number as its literal, maps with sorted keys. */
function marshal(value: GoValue): string {
  if (value instanceof GoNumber) return value.text
  if (value instanceof GoFloat) return goMarshal(value.value)
  if (Array.isArray(value)) return `[${value.map((item) => marshal(item)).join(',')}]`
  if (value !== null && value !== undefined && typeof value === 'object') {
    const keys = Object.keys(value).sort(compareGoStrings)
    return `{${keys.map((key) => `${goJsonString(key)}:${marshal(value[key])}`).join(',')}}`
  }

  return goMarshal(value ?? null)
}

export const BUILTINS: Readonly<Record<string, Builtin>> = {
  and: () => undefined,
  or: () => undefined,
  not(args) {
    arity('not', args, 1)
    return !truthOf(args[0])
  },
  len: length,
  index,
  slice,
  eq,
  ne(args) {
    arity('ne', args, 2)
    return !eq(args)
  },
  lt: (args) => lt(args),
  le: (args) => lt(args) || eq(args),
  gt: (args) => !lt(args) && !eq(args),
  ge: (args) => !lt(args),
  print: (args) => sprint(args),
  println: (args) => `${args.map((arg) => goValueText(arg)).join(' ')}\n`,
  printf: (args) => goFormat(String(args[0] ?? ''), args.slice(1)),
  html: (args) => htmlEscape(sprint(args)),
  js: (args) => jsEscape(sprint(args)),
  urlquery: (args) => encodeURIComponent(sprint(args)).replaceAll('%20', '+'),
  json,
  title: (args) => title(stringArg('title', args)),
  lower: (args) => stringArg('lower', args).toLowerCase(),
  upper: (args) => stringArg('upper', args).toUpperCase(),
}

export const FUNCTION_NAMES: ReadonlySet<string> = new Set([...Object.keys(BUILTINS), 'call'])
