/**
 * Go's flag.FlagSet.Parse as urfave/cli v2.26 drives it for crictl: `-x` and `--x` alike, a value
 * after `=` or in the next word (bool flags only after `=`), parsing stops at the first word that is
 * not a flag (or after `--`), and the error texts Go prints ("flag provided but not defined: -x").
 * With UseShortOptionHandling, urfave retries an undefined `-it` as `-i -t` when every letter is a
 * flag (parse.go parseIter). Values are kept as Go would hold them: the last one wins, a string
 * slice collects every value split at commas.
 */
import {type CrictlFlag, flagNames} from './command-spec.js'
import {goQuote} from '../util/go-quote.js'

/** What a command line gave a FlagSet. */
export interface FlagValues {
  /** Canonical name (CrictlFlag.name) → the values given, in order. */
  readonly byFlag: Map<string, string[]>
  /** The names as typed, in the order they were first set (Go's Visit order is by name; urfave checks aliases by it). */
  readonly typed: Set<string>
}

export class FlagParseError extends Error {}

const GO_BOOL_TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True'])
const GO_BOOL_FALSE = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False'])

/** strconv.ParseBool. */
export function parseGoBool(text: string): boolean | undefined {
  if (GO_BOOL_TRUE.has(text)) return true
  if (GO_BOOL_FALSE.has(text)) return false
  return undefined
}

const GO_DURATION = /^[-+]?(?:0|(?:(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+)$/
const DURATION_PART = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/g
const UNIT_MS: Record<string, number> = {ns: 1e-6, us: 1e-3, µs: 1e-3, μs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000}

/** time.ParseDuration in milliseconds, or undefined where Go refuses the text (a bare "5" included). */
export function parseGoDuration(text: string): number | undefined {
  if (!GO_DURATION.test(text)) return undefined
  let total = 0
  for (const [, amount, unit] of text.matchAll(DURATION_PART)) total += Number(amount) * UNIT_MS[unit]
  return text.startsWith('-') ? -total : total
}

/** strconv.ParseInt(text, 0, 64): the Go error word for a bad one ("parse error", "value out of range"). */
function goIntError(text: string): string | undefined {
  const match = /^[-+]?(0[xX][\da-fA-F](?:_?[\da-fA-F])*|0[bB][01](?:_?[01])*|0[oO]?[0-7](?:_?[0-7])*|[1-9](?:_?\d)*|0)$/.exec(text)
  if (!match) return 'parse error'
  const digits = match[1].replaceAll('_', '')
  const magnitude = /^0[0-7]/.test(digits) ? BigInt(`0o${digits.slice(1)}`) : BigInt(digits.replace(/^0[oO]/, '0o'))
  const value = text.startsWith('-') ? -magnitude : magnitude
  return value > 9_223_372_036_854_775_807n || value < -9_223_372_036_854_775_808n ? 'value out of range' : undefined
}

/** Checks a value as Go's flag.Value.Set for the kind would, throwing Go's message. */
function checkValue(flag: CrictlFlag, typed: string, value: string): void {
  if (flag.kind === 'int') {
    const error = goIntError(value)
    if (error) throw new FlagParseError(`invalid value ${goQuote(value)} for flag -${typed}: ${error}`)
  } else if (flag.kind === 'duration' && parseGoDuration(value) === undefined) {
    throw new FlagParseError(`invalid value ${goQuote(value)} for flag -${typed}: parse error`)
  }
}

/** One FlagSet over a command's flags, parsed in one or more passes as urfave's parseIter does. */
export class GoFlagSet {
  readonly values: FlagValues = {byFlag: new Map(), typed: new Set()}
  private readonly lookup = new Map<string, CrictlFlag>()

  constructor(flags: readonly CrictlFlag[]) {
    for (const flag of flags) for (const name of flagNames(flag)) this.lookup.set(name, flag)
  }

  has(name: string): boolean {
    return this.lookup.has(name)
  }

  /** flag.FlagSet.Parse: the words left after the flags, or a FlagParseError with Go's message. */
  parse(args: readonly string[]): string[] {
    let rest = [...args]
    for (;;) {
      const word = rest[0]
      if (word === undefined || word.length < 2 || word[0] !== '-') return rest
      let minuses = 1
      if (word[1] === '-') {
        minuses = 2
        if (word.length === 2) return rest.slice(1)
      }

      let name = word.slice(minuses)
      if (name.length === 0 || name[0] === '-' || name[0] === '=') throw new FlagParseError(`bad flag syntax: ${word}`)
      rest = rest.slice(1)
      let value: string | undefined
      const eq = name.indexOf('=', 1)
      if (eq !== -1) {
        value = name.slice(eq + 1)
        name = name.slice(0, eq)
      }

      const flag = this.lookup.get(name)
      if (!flag) throw new FlagParseError(`flag provided but not defined: -${name}`)
      if (flag.kind === 'bool') {
        if (value !== undefined && parseGoBool(value) === undefined)
          throw new FlagParseError(`invalid boolean value ${goQuote(value)} for -${name}: parse error`)
        this.record(flag, name, value ?? 'true')
        continue
      }

      if (value === undefined && rest.length > 0) {
        value = rest[0]
        rest = rest.slice(1)
      }

      if (value === undefined) throw new FlagParseError(`flag needs an argument: -${name}`)
      checkValue(flag, name, value)
      this.record(flag, name, value)
    }
  }

  private record(flag: CrictlFlag, typed: string, value: string): void {
    const values = this.values.byFlag.get(flag.name) ?? []
    // urfave's StringSlice splits each value at commas; the other kinds keep the last value.
    if (flag.kind === 'string-slice') values.push(...value.split(','))
    else values.splice(0, values.length, value)
    this.values.byFlag.set(flag.name, values)
    this.values.typed.add(typed)
  }
}

/**
 * urfave's parseIter: parse, and with short option handling turn an undefined `-it` into `-i -t`
 * (only when each letter is a flag) and parse again from there; then urfave's check that no flag was
 * given under two of its names.
 */
export function parseCommandFlags(
  flags: readonly CrictlFlag[],
  args: readonly string[],
  shortOptions: boolean,
): {set: GoFlagSet; rest: string[]} {
  const set = new GoFlagSet(flags)
  let words = [...args]
  for (;;) {
    try {
      const rest = set.parse(words)
      checkOneFormEach(flags, set.values)
      return {set, rest}
    } catch (error) {
      const prefix = 'flag provided but not defined: -'
      if (!shortOptions || !(error instanceof FlagParseError) || !error.message.startsWith(prefix)) throw error
      const trimmed = error.message.slice(prefix.length)
      const index = words.findIndex((word) => word.replace(/^-+/, '') === trimmed)
      const word = words[index]
      const splittable = word !== undefined && word.startsWith('-') && !word.startsWith('--') && word.length > 2
      const letters = [...(word?.slice(1) ?? '')]
      if (!splittable || !letters.every((letter) => set.has(letter))) throw error
      words = [...letters.map((letter) => `-${letter}`), ...words.slice(index + 1)]
    }
  }
}

/** urfave's normalizeFlags: "Cannot use two forms of the same flag: a all" (Go visits flags sorted by name). */
function checkOneFormEach(flags: readonly CrictlFlag[], values: FlagValues): void {
  const visited = new Set([...values.typed].sort())
  for (const flag of flags) {
    const names = flagNames(flag)
    if (names.length === 1) continue
    const given = names.filter((name) => visited.has(name))
    if (given.length > 1) throw new FlagParseError(`Cannot use two forms of the same flag: ${given[1]} ${given[0]}`)
  }
}
