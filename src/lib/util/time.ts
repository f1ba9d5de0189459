/**
 * The CRI's timestamps are int64 nanoseconds since the epoch, decoded as strings. Converting them is
 * not presentation: the domain code (status reports, sort orders) needs it as much as the tables.
 */

/** int64 nanoseconds (as the string the client decodes) → milliseconds since the epoch. */
export function nanosToMs(nanos: string | number | bigint): number {
  // A positive int64 as decoded: dropping six digits is the division, without a BigInt (every row of a listing has an age).
  if (typeof nanos === 'string' && nanos.length > 6 && isPositive(nanos)) {
    const ms = Number(nanos.slice(0, -6))
    if (Number.isSafeInteger(ms)) return ms
  }

  return Number(BigInt(nanos) / 1_000_000n)
}

/** ISO 8601 with milliseconds; 0 means "never" and becomes null. */
export function nanosToIso(nanos: string | number | bigint): string | null {
  if (BigInt(nanos) === 0n) return null
  return new Date(nanosToMs(nanos)).toISOString()
}

/**
 * A timestamp a runtime meant as nanoseconds but may have sent in a coarser unit, read by its
 * magnitude: CRI-O 1.26 sends a sandbox's created_at and PodSandboxStatus' timestamp in seconds.
 * Today is some 1.7e9 seconds, 1.7e12 ms, 1.7e15 µs and 1.7e18 ns after the epoch; a value from 1e9
 * up to 1e17 read as nanoseconds would be a time in the first three years after 1970, which no
 * runtime reports. Smaller values (0 "never", tests' small counters) stay as they are.
 */
export function epochNanos(value: string): string {
  // Positive as decoded; nanoseconds of any date after 1973 have 18 digits or more.
  if (value.length < 10 || value.length > 17 || !isPositive(value)) return value
  const scale = value.length <= 11 ? 1_000_000_000n : value.length <= 14 ? 1_000_000n : 1000n
  return (BigInt(value) * scale).toString()
}

/**
 * int64 nanoseconds → RFC 3339 with nanosecond precision (trailing zeros dropped, as Go's
 * RFC3339Nano); 0 means "never" and becomes null.
 */
export function nanosToRfc3339(nanos: string | number | bigint): string | null {
  const value = BigInt(nanos)
  if (value === 0n) return null
  const seconds = value / 1_000_000_000n
  let fraction = value % 1_000_000_000n
  let whole = seconds
  if (fraction < 0n) {
    fraction += 1_000_000_000n
    whole -= 1n
  }

  const base = new Date(Number(whole) * 1000).toISOString().slice(0, 19)
  const digits = fraction.toString().padStart(9, '0').replace(/0+$/, '')
  return `${base}${digits ? `.${digits}` : ''}Z`
}

/** Compares int64 nanosecond strings without losing precision; newest first when used in sort. */
export function compareNanosDesc(a: string, b: string): number {
  // Positive, as decoded (no sign, no leading zero): the longer is the larger, else text order is number order.
  // A sort of 5000 pods compares some 60 000 times; two BigInts each time showed in the profile.
  if (isPositive(a) && isPositive(b)) return a.length === b.length ? (a === b ? 0 : a > b ? -1 : 1) : a.length > b.length ? -1 : 1
  const x = BigInt(a)
  const y = BigInt(b)
  return x === y ? 0 : x > y ? -1 : 1
}

/**
 * nanosToMs of an int64 held as its high (signed) and low (unsigned) 32-bit words, as a listing read
 * from the message's bytes keeps it: division towards zero, without a BigInt for positive times.
 */
export function nanosWordsToMs(high: number, low: number): number {
  if (high < 0) return Number(BigInt.asIntN(64, (BigInt(high) << 32n) | BigInt(low)) / 1_000_000n)
  // 2^32 = 4294 * 10^6 + 967 296, so the nanoseconds are high * 4294 ms plus `rest` ns, exact in a double.
  const rest = high * 967_296 + low
  return high * 4294 + (rest - (rest % 1_000_000)) / 1_000_000
}

/** compareNanosDesc of two int64s held as words (high signed, low unsigned): newest first. */
export function compareNanosWordsDesc(highA: number, lowA: number, highB: number, lowB: number): number {
  return highA === highB ? lowB - lowA : highB - highA
}

/** Starts with 1-9: a positive int64 as the client decodes it (anything else takes the BigInt path). */
function isPositive(nanos: string): boolean {
  const first = nanos[0]
  return first >= '1' && first <= '9'
}

/**
 * Milliseconds on a monotonic clock, for durations. performance.now() would do the same, but its
 * first use loads Node's perf_hooks internals (about nine modules), a cost every listing paid.
 */
export function monotonicMs(): number {
  const [seconds, nanos] = process.hrtime()
  return seconds * 1000 + nanos / 1e6
}
