import {UsageError} from '../errors.js'
import {closestName} from './names.js'

/**
 * A strict reader for decoded YAML/JSON: every object's keys are checked against what podctl
 * supports, so a typo or an unsupported Kubernetes field is refused with one line naming the
 * file and the field path, before anything is created (a silently ignored field is a bug the
 * user finds much later).
 */
export class ManifestError extends UsageError {}

export type Json = null | boolean | number | string | Json[] | {[key: string]: Json}
export type JsonObject = {[key: string]: Json}

export interface ObjectRule {
  /** Keys podctl reads. */
  supported: readonly string[]
  /** Known fields of the Kubernetes (or crictl) type that podctl does not support → the hint shown after "not supported by podctl". */
  unsupported?: Readonly<Record<string, string>>
  /** Keys accepted and ignored because the API server ignores them on create too (e.g. status). */
  ignored?: readonly string[]
}

export class FieldReader {
  constructor(readonly source: string) {}

  fail(path: string, message: string): never {
    throw new ManifestError(`${this.source}: ${path} ${message}`)
  }

  /** The value must be an object (null counts as empty); its keys are checked against the rule. */
  object(value: Json | undefined, path: string, rule: ObjectRule): JsonObject {
    if (value === undefined || value === null) return {}
    if (typeof value !== 'object' || Array.isArray(value)) this.fail(path, `must be an object, not ${describe(value)}`)
    for (const key of Object.keys(value)) {
      if (rule.supported.includes(key) || rule.ignored?.includes(key)) continue
      const where = path === '' ? key : `${path}.${key}`
      const hint = rule.unsupported?.[key]
      if (hint !== undefined) this.fail(where, `is not supported by podctl${hint ? `; ${hint}` : ''}`)
      const guess = closestName(key, rule.supported)
      this.fail(where, `is not a known field${guess ? `; did you mean ${guess}?` : ` (podctl reads: ${rule.supported.join(', ')})`}`)
    }

    return value
  }

  list(value: Json | undefined, path: string): Json[] {
    if (value === undefined || value === null) return []
    if (!Array.isArray(value)) this.fail(path, `must be a list, not ${describe(value)}`)
    return value
  }

  string(value: Json | undefined, path: string, options: {required?: boolean; nonEmpty?: boolean} = {}): string | undefined {
    if (value === undefined || value === null) {
      if (options.required) this.fail(path, 'is required')
      return undefined
    }

    if (typeof value !== 'string') {
      const quote = typeof value === 'number' || typeof value === 'boolean' ? `; quote it: "${String(value)}"` : ''
      this.fail(path, `must be a string, not ${describe(value)}${quote}`)
    }

    if ((options.required || options.nonEmpty) && value.trim() === '') this.fail(path, 'must not be empty')
    return value
  }

  requiredString(value: Json | undefined, path: string): string {
    return this.string(value, path, {required: true}) as string
  }

  boolean(value: Json | undefined, path: string): boolean | undefined {
    if (value === undefined || value === null) return undefined
    if (typeof value !== 'boolean') this.fail(path, `must be true or false, not ${describe(value)}`)
    return value
  }

  integer(value: Json | undefined, path: string, range: {min?: number; max?: number} = {}): number | undefined {
    if (value === undefined || value === null) return undefined
    if (typeof value !== 'number' || !Number.isInteger(value)) this.fail(path, `must be an integer, not ${describe(value)}`)
    if (range.min !== undefined && value < range.min) this.fail(path, `must be ${rangeText(range)}, not ${value}`)
    if (range.max !== undefined && value > range.max) this.fail(path, `must be ${rangeText(range)}, not ${value}`)
    return value
  }

  oneOf<T extends string>(value: Json | undefined, path: string, allowed: readonly T[]): T | undefined {
    const text = this.string(value, path)
    if (text === undefined) return undefined
    if (!(allowed as readonly string[]).includes(text)) this.fail(path, `must be one of ${allowed.join(', ')}, not "${text}"`)
    return text as T
  }

  strings(value: Json | undefined, path: string): string[] {
    return this.list(value, path).map((item, index) => this.string(item, `${path}[${index}]`, {required: true}) ?? '')
  }

  /** A string → string map (labels, annotations); non-string values are refused, as the API server does. */
  stringMap(value: Json | undefined, path: string, check?: (key: string, value: string, path: string) => void): Record<string, string> {
    if (value === undefined || value === null) return {}
    if (typeof value !== 'object' || Array.isArray(value)) this.fail(path, `must be a map of strings, not ${describe(value)}`)
    const out: Record<string, string> = {}
    for (const [key, item] of Object.entries(value)) {
      const text = this.string(item, `${path}.${key}`) ?? ''
      check?.(key, text, `${path}.${key}`)
      out[key] = text
    }

    return out
  }
}

function rangeText(range: {min?: number; max?: number}): string {
  if (range.min !== undefined && range.max !== undefined) return `between ${range.min} and ${range.max}`
  if (range.min !== undefined) return `at least ${range.min}`
  return `at most ${range.max}`
}

export function describe(value: Json | undefined): string {
  if (value === null || value === undefined) return 'null'
  if (Array.isArray(value)) return 'a list'
  if (typeof value === 'object') return 'an object'
  if (typeof value === 'string') return `"${value.length > 40 ? `${value.slice(0, 40)}…` : value}"`
  return String(value)
}
