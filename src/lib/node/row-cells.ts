/**
 * What the tables drawn from bytes (container-table.ts, pod-table.ts) compute the same way for each
 * row: an ID's short span, the age of an int64 created_at, and the order of two of them.
 */

/** crictl's short ID (kube/helpers shortId): after an algorithm prefix, 13 characters. */
export const SHORT_ID = 13

/** Where shortId starts: after "algorithm:" when what precedes the first colon is [a-z0-9]+. */
export function shortIdStart(bytes: Uint8Array, start: number, end: number): number {
  // The typed array's own search: an ID is 64 hex digits, most without a colon; a byte loop over each
  // ran cold, and Buffer#indexOf's argument handling cost as much again.
  const colon = Uint8Array.prototype.indexOf.call(bytes, 0x3a, start)
  if (colon < 0 || colon >= end || colon === start) return start
  for (let j = start; j < colon; j++) {
    const byte = bytes[j]
    if (!((byte >= 0x61 && byte <= 0x7a) || (byte >= 0x30 && byte <= 0x39))) return start
  }

  return colon + 1
}

/** newestFirst's order of two int64 created_at as high (signed) and low (unsigned) words: newest first. */
export function compareWordsDesc(highA: number, lowA: number, highB: number, lowB: number): number {
  const high = highB - highA
  return high === 0 ? lowB - lowA : high
}

/**
 * Ages of created_at, as nanosToMs (division towards zero) then `age`, without a BigInt for positive
 * times; remembered per whole second, the only unit an age shows (humanDuration), and the last one
 * again at once (rows are newest first, so a row's age is most often the one before it).
 */
export class Ages {
  private readonly known = new Map<number, string>()
  private lastSecond = Number.NaN
  private lastAge = ''

  constructor(
    private readonly nowMs: number,
    private readonly age: (elapsedMs: number) => string,
  ) {}

  of(high: number, low: number): string {
    let ms: number
    if (high >= 0) {
      // 2^32 = 4294 * 10^6 + 967 296, so the nanoseconds are high * 4294 ms plus `rest` ns, exact in a double.
      const rest = high * 967_296 + low
      ms = high * 4294 + (rest - (rest % 1_000_000)) / 1_000_000
    } else {
      ms = Number(BigInt.asIntN(64, (BigInt(high) << 32n) | BigInt(low)) / 1_000_000n)
    }

    const elapsed = this.nowMs - ms
    const second = Math.floor(elapsed / 1000)
    if (second === this.lastSecond) return this.lastAge
    let shown = this.known.get(second)
    if (shown === undefined) this.known.set(second, (shown = this.age(elapsed)))
    this.lastSecond = second
    this.lastAge = shown
    return shown
  }
}
