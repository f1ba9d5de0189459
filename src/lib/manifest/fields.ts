import {UsageError} from '../errors.js'
import {type ApiType, isApiField, unknownFieldMessage, unknownFieldsUnder} from './api-fields.js'
import {closestName} from './names.js'

/**
 * A strict reader for decoded YAML/JSON: every object's keys are checked against what podctl
 * supports, so a typo or an unsupported Kubernetes field is refused with one line naming the
 * file and the field path, before anything is created (a silently ignored field is a bug the
 * user finds much later).
 */
export class ManifestError extends UsageError {
  /** Its own name (a UsageError by class and exit code, 2), so a library caller can tell a bad manifest from a bad option. */
  override readonly code: string = 'InvalidManifest'

  constructor(message: string) {
    // Keys and values quoted from a manifest may hold terminal escape sequences or newlines: show them escaped.
    super(escapeControl(message))
    this.name = 'InvalidManifest'
  }

  /** A heading and one indented line per problem; each part escaped on its own. */
  static lines(heading: string, lines: readonly string[]): ManifestError {
    const error = new ManifestError(heading)
    error.message = [escapeControl(heading), ...lines.map((line) => `  ${escapeControl(line)}`)].join('\n')
    return error
  }
}

/**
 * Control characters (C0, DEL, C1) and Unicode bidi overrides, written as visible escapes ("\x1b",
 * "\n", "\u202e") so a quoted value can neither drive the terminal nor break the one-line message.
 */
export function escapeControl(text: string): string {
  // eslint-disable-next-line no-control-regex -- finding control characters is the point
  return text.replaceAll(/[\u0000-\u001F\u007F-\u009F\u061C\u200E\u200F\u2028\u2029\u202A-\u202E\u2066-\u2069]/g, (char) => {
    const named: Record<string, string> = {'\n': String.raw`\n`, '\r': String.raw`\r`, '\t': String.raw`\t`}
    if (named[char]) return named[char]
    const code = char.codePointAt(0)!
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`
  })
}

/** Integers the YAML reader could not hold exactly in a number (beyond ±2^53) stay bigints. */
export type Json = null | boolean | number | bigint | string | Json[] | {[key: string]: Json}

/** The ranges of the wire types behind manifest fields (Kubernetes int32/int64, CRI uint32/int64). */
export const INT32 = {min: -(2 ** 31), max: 2 ** 31 - 1}
export const UINT32 = {min: 0, max: 2 ** 32 - 1}
export const INT64 = {min: -(2n ** 63n), max: 2n ** 63n - 1n}

export interface IntegerRange {
  min?: number | bigint
  max?: number | bigint
}
export type JsonObject = {[key: string]: Json}

export interface ObjectRule {
  /** Keys podctl reads. */
  supported: readonly string[]
  /** Known fields of the Kubernetes (or crictl) type that podctl does not support → the hint shown after "not supported by podctl". */
  unsupported?: Readonly<Record<string, string>>
  /** Keys accepted and ignored because the API server ignores them on create too (e.g. status). */
  ignored?: readonly string[]
  /** Valid fields with no effect on a single node → why; accepted with one warning (--strict refuses them). */
  warned?: Readonly<Record<string, string>>
  /**
   * Fields of Kubernetes versions newer than podctl's, or behind an alpha feature gate: dropped
   * with one warning, as an API server without the gate drops them (collect mode; --strict refuses them).
   */
  dropped?: readonly string[]
  /**
   * The object's Kubernetes API type (api-fields.ts). A key podctl's rule does not name is then
   * dropped only when some Kubernetes release has it, and refused with a did-you-mean when none
   * has (kubectl's strict field validation); the contents of the fields podctl does not read are
   * checked against the API the same way. Without it, `dropped` and the near-typo rule decide.
   */
  api?: ApiType
}

export interface FieldReaderOptions {
  /**
   * Collect every unknown or unsupported field (and the warned ones) instead of stopping at the
   * first; `finish()` then refuses them all in one error. Without it the first one throws. In
   * this mode (Kubernetes manifests) an unknown field that is no near-typo of a known one is
   * dropped (`dropped`), as a field of a newer Kubernetes version than podctl knows.
   */
  collect?: boolean
}

export class FieldReader {
  /** Refused fields so far (collect mode): "path message". */
  readonly refusals: string[] = []
  /** Warned fields so far (collect mode). */
  readonly warnings: Array<{path: string; reason: string}> = []
  /** Paths of the fields dropped as unknown to podctl's Kubernetes version (collect mode). */
  readonly dropped: string[] = []

  constructor(
    readonly source: string,
    readonly options: FieldReaderOptions = {},
  ) {}

  /** Stops at an invalid value; refusals collected so far are reported with it, all at once. */
  fail(path: string, message: string): never {
    // A field refused inside this one already says why (e.g. a volume whose only source was refused).
    if (!this.refusals.some((refusal) => refusal.startsWith(`${path}.`))) this.refusals.push(`${path} ${message}`)
    throw this.error()
  }

  /** A refusal that does not stop the reading (collect mode), so one error lists them all. */
  refuse(path: string, message: string): void {
    if (!this.options.collect) this.fail(path, message)
    this.refusals.push(`${path} ${message}`)
  }

  warn(path: string, reason: string): void {
    this.warnings.push({path, reason})
  }

  /** Throws one error listing every refusal, if there was any. */
  finish(): void {
    if (this.refusals.length > 0) throw this.error()
  }

  private error(): ManifestError {
    if (this.refusals.length === 1) return new ManifestError(`${this.source}: ${this.refusals[0].trimStart()}`)
    return ManifestError.lines(`${this.source}: ${this.refusals.length} fields cannot be run as written:`, this.refusals)
  }

  /** The value must be an object (null counts as empty); its keys are checked against the rule. */
  object(value: Json | undefined, path: string, rule: ObjectRule): JsonObject {
    if (value === undefined || value === null) return {}
    if (typeof value !== 'object' || Array.isArray(value)) this.notAnObject(value, path)
    for (const key of Object.keys(value)) {
      if (!rule.supported.includes(key)) this.otherKey(rule, key, value[key], path === '' ? key : `${path}.${key}`)
    }

    return value
  }

  /** A key the rule does not read: ignored, warned about, refused as unsupported, dropped or refused as unknown. */
  private otherKey(rule: ObjectRule, key: string, value: Json, where: string): void {
    if (rule.ignored?.includes(key)) {
      this.checkUnread(rule, key, value, where)
      return
    }

    // Own keys only: "__proto__" or "constructor" must not find Object.prototype's members.
    const own = (table?: Readonly<Record<string, string>>) => (table && Object.hasOwn(table, key) ? table[key] : undefined)
    const reason = own(rule.warned)
    if (reason !== undefined) {
      if (value !== null && !this.options.collect) this.fail(where, `has no effect on a single node${reason ? ` (${reason})` : ''}`)
      if (value !== null) this.warn(where, reason)
      this.checkUnread(rule, key, value, where)
      return
    }

    const hint = own(rule.unsupported)
    if (hint !== undefined) {
      // Pod manifests (collect mode) are valid Kubernetes: the field is valid, only not possible here.
      const what = this.options.collect ? 'on a single node' : 'by podctl'
      this.refuse(where, `is not supported ${what}${hint ? `; ${hint}` : ''}`)
      return
    }

    if (rule.api && this.options.collect) this.apiField(rule.api, key, value, where)
    else this.unknownKey(rule, key, value, where)
  }

  /** A key of an object without an API type (crictl configs, resource lists): dropped when no near-typo in collect mode, else refused. */
  private unknownKey(rule: ObjectRule, key: string, value: Json, where: string): void {
    const known = [...rule.supported, ...Object.keys(rule.warned ?? {}), ...Object.keys(rule.unsupported ?? {})]
    const guess = rule.dropped?.includes(key) ? undefined : closestName(key, known)
    // A field of a newer Kubernetes (or an alpha one) is dropped; one close to a known field is a typo.
    if (this.options.collect && guess === undefined) {
      if (value !== null) this.dropped.push(where)
      return
    }

    this.refuse(where, `is not a known field${guess ? `; did you mean ${guess}?` : ` (podctl reads: ${rule.supported.join(', ')})`}`)
  }

  /** A key of an API object that podctl's rule does not name: a field of some release is dropped, any other refused. */
  private apiField(api: ApiType, key: string, value: Json, where: string): void {
    if (!isApiField(api, key)) {
      this.refuse(where, unknownFieldMessage(api, key))
      return
    }

    if (value !== null) this.dropped.push(where)
    this.checkUnread({api}, key, value, where)
  }

  /** The contents of a field podctl does not read (warned, ignored, dropped), checked against the API as kubectl does. */
  private checkUnread(rule: Pick<ObjectRule, 'api'>, key: string, value: Json | undefined, where: string): void {
    if (!rule.api || !this.options.collect) return
    for (const unknown of unknownFieldsUnder(rule.api, key, value, where)) this.refuse(unknown.path, unknown.message)
  }

  private notAnObject(value: Json, path: string): never {
    // The whole document is not quoted: a file that is no manifest (an .env, /etc/passwd) may hold secrets.
    if (path === '')
      this.fail(path, `is not a Kubernetes manifest: the document is ${shapeOf(value)}, not an object with apiVersion and kind`)
    this.fail(path, `must be an object, not ${describe(value)}`)
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
      const quote =
        typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean' ? `; quote it: "${String(value)}"` : ''
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

  /**
   * An integer within `range` (default: int64, the widest Kubernetes and CRI integer), so a value
   * the runtime would refuse ("invalid int64") is refused here, before anything is created.
   * Values beyond ±2^53 that are still in range are refused too: podctl cannot carry them exactly.
   */
  integer(value: Json | undefined, path: string, range: IntegerRange = {}): number | undefined {
    if (value === undefined || value === null) return undefined
    const exact = typeof value === 'bigint' ? value : typeof value === 'number' && Number.isInteger(value) ? BigInt(value) : undefined
    if (exact === undefined) this.fail(path, `must be an integer, not ${describe(value)}`)
    const min = BigInt(range.min ?? INT64.min)
    const max = BigInt(range.max ?? INT64.max)
    const shown = typeof value === 'number' && !Number.isSafeInteger(value) ? String(value) : String(exact)
    if (exact < min || exact > max) {
      const bounds =
        range.min !== undefined && range.max !== undefined
          ? `between ${min} and ${max}`
          : exact < min
            ? `at least ${min}`
            : `at most ${max}`
      this.fail(path, `must be ${bounds}, not ${shown}`)
    }

    if (exact > BigInt(Number.MAX_SAFE_INTEGER) || exact < BigInt(Number.MIN_SAFE_INTEGER)) {
      this.fail(path, `${shown} is too large for podctl; use at most ${Number.MAX_SAFE_INTEGER}`)
    }

    return Number(exact)
  }

  oneOf<T extends string>(value: Json | undefined, path: string, allowed: readonly T[]): T | undefined {
    const text = this.string(value, path)
    if (text === undefined) return undefined
    if (!(allowed as readonly string[]).includes(text)) this.fail(path, `must be one of ${allowed.join(', ')}, not "${text}"`)
    return text as T
  }

  /**
   * A list of strings, each required and not blank; with allowEmpty an item may be "" or blank, as
   * the API server lets command and args be (`redis-server --save ""` turns snapshots off).
   */
  strings(value: Json | undefined, path: string, {allowEmpty = false}: {allowEmpty?: boolean} = {}): string[] {
    return this.list(value, path).map((item, index) => {
      const where = `${path}[${index}]`
      if (allowEmpty && (item === null || item === undefined)) this.fail(where, 'must be a string, not null')
      return this.string(item, where, {required: !allowEmpty}) ?? ''
    })
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

export function describe(value: Json | undefined): string {
  if (value === null || value === undefined) return 'null'
  if (Array.isArray(value)) return 'a list'
  if (typeof value === 'object') return 'an object'
  if (typeof value === 'string') return `"${value.length > 40 ? `${value.slice(0, 40)}…` : value}"`
  return String(value)
}

/** What a value is, never what it holds. */
export function shapeOf(value: Json): string {
  if (typeof value === 'string') return 'text'
  if (typeof value === 'number' || typeof value === 'bigint') return 'a number'
  if (typeof value === 'boolean') return 'true or false'
  return Array.isArray(value) ? 'a list' : 'null'
}
