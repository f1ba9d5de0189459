/**
 * fmt.Sprintf for crictl's `printf` template function over the values a template holds: the common
 * verbs (%v %s %q %d %t %x %X %f %e %g %%) with flags, width and precision, and fmt's marks for a
 * wrong or missing operand (`%!d(string=x)`, `%!s(MISSING)`, `%!(EXTRA …)`).
 */
import {GoFloat, goFloatText, GoNumber, goTypeName, type GoValue, goValueText} from './go-values.js'

interface Spec {
  flags: string
  width?: number
  precision?: number
  verb: string
}

function pad(text: string, spec: Spec): string {
  if (spec.width === undefined || text.length >= spec.width) return text
  if (spec.flags.includes('-')) return text.padEnd(spec.width)
  if (spec.flags.includes('0') && /^[+-]?\d/.test(text)) {
    const sign = /^[+-]/.test(text) ? text[0] : ''
    return sign + text.slice(sign.length).padStart(spec.width - sign.length, '0')
  }

  return text.padStart(spec.width)
}

function wrong(spec: Spec, value: GoValue): string {
  return `%!${spec.verb}(${goTypeName(value)}=${goValueText(value)})`
}

function stringOf(value: GoValue): string | undefined {
  if (typeof value === 'string') return value
  if (value instanceof GoNumber) return value.text
  return undefined
}

function integer(spec: Spec, value: number): string {
  const sign = value < 0 ? '-' : spec.flags.includes('+') ? '+' : spec.flags.includes(' ') ? ' ' : ''
  const magnitude = Math.abs(value)
  const digits = spec.verb === 'd' ? String(magnitude) : magnitude.toString(16)
  return sign + (spec.verb === 'X' ? digits.toUpperCase() : digits)
}

function float(spec: Spec, value: number): string {
  const sign = value >= 0 && spec.flags.includes('+') ? '+' : ''
  if (spec.verb === 'f') return sign + value.toFixed(spec.precision ?? 6)
  if (spec.verb === 'e') {
    const [mantissa, power] = value.toExponential(spec.precision ?? 6).split('e')
    return `${sign}${mantissa}e${power.startsWith('-') ? '-' : '+'}${power.replace(/^[+-]/, '').padStart(2, '0')}`
  }

  return sign + goFloatText(value)
}

function formatOne(spec: Spec, value: GoValue): string {
  const text = stringOf(value)
  switch (spec.verb) {
    case 'v':
      return goValueText(value)
    case 's':
      if (text !== undefined) return spec.precision === undefined ? text : text.slice(0, spec.precision)
      return Array.isArray(value) || (value !== null && typeof value === 'object' && !(value instanceof GoFloat))
        ? goValueText(value)
        : wrong(spec, value)
    case 'q':
      return text === undefined ? wrong(spec, value) : JSON.stringify(text)
    case 't':
      return typeof value === 'boolean' ? String(value) : wrong(spec, value)
    case 'd':
      return typeof value === 'number' ? integer(spec, value) : wrong(spec, value)
    case 'x':
    case 'X':
      if (typeof value === 'number') return integer(spec, value)
      if (text !== undefined) return Buffer.from(text).toString('hex')[spec.verb === 'X' ? 'toUpperCase' : 'toLowerCase']()
      return wrong(spec, value)
    case 'f':
    case 'e':
    case 'g':
      return value instanceof GoFloat ? float(spec, value.value) : wrong(spec, value)
    default:
      return `%!${spec.verb}(${goTypeName(value)}=${goValueText(value)})`
  }
}

export function goFormat(format: string, args: readonly GoValue[]): string {
  let out = ''
  let next = 0
  const pattern = /%([-+# 0]*)(\d+)?(?:\.(\d*))?(.)?/gy
  for (let i = 0; i < format.length;) {
    const percent = format.indexOf('%', i)
    if (percent === -1) {
      out += format.slice(i)
      break
    }

    out += format.slice(i, percent)
    pattern.lastIndex = percent
    const match = pattern.exec(format)!
    i = pattern.lastIndex
    const [, flags, width, precision, verb] = match
    if (verb === undefined) {
      out += '%!(NOVERB)'
      continue
    }

    if (verb === '%') {
      out += '%'
      continue
    }

    const spec: Spec = {
      flags,
      width: width === undefined ? undefined : Number(width),
      precision: precision === undefined ? undefined : Number(precision || 0),
      verb,
    }
    out += next < args.length ? pad(formatOne(spec, args[next]), spec) : `%!${verb}(MISSING)`
    next++
  }

  if (next < args.length)
    out += `%!(EXTRA ${args
      .slice(next)
      .map((arg) => `${goTypeName(arg)}=${goValueText(arg)}`)
      .join(', ')})`
  return out
}
