/**
 * The longest delay Node's timers accept: setTimeout treats anything above 2^31-1 ms (about 24.8
 * days) as 1 ms, so an over-long timeout would fire at once. gRPC deadlines and every timer podctl
 * arms are bounded by it; a longer wait is indistinguishable from "forever" for a command line.
 */
export const MAX_TIMER_MS = 2_147_483_647

/** A duration in ms, made safe for setTimeout and gRPC deadlines: 0..MAX_TIMER_MS, NaN → MAX_TIMER_MS. */
export function clampTimerMs(ms: number): number {
  if (Number.isNaN(ms)) return MAX_TIMER_MS
  return Math.min(Math.max(0, Math.trunc(ms)), MAX_TIMER_MS)
}

/** Whole seconds (a grace period, a hook timeout) bounded so that seconds * 1000 is a safe timer delay. */
export function clampTimerSeconds(seconds: number): number {
  return Math.floor(clampTimerMs(seconds * 1000) / 1000)
}

/**
 * Parses "1h2m3.5s", "500ms", "2m" or a bare number of seconds into milliseconds.
 * Returns undefined for anything else so callers can name the flag in their error.
 */
export function parseDuration(text: string): number | undefined {
  const value = text.trim()
  if (/^\d+(\.\d+)?$/.test(value)) return Math.round(Number(value) * 1000)
  const unitMs: Record<string, number> = {h: 3_600_000, m: 60_000, s: 1000, ms: 1, us: 0.001, µs: 0.001, ns: 0.000_001}
  const part = /(\d+(?:\.\d+)?)(ms|us|µs|ns|h|m|s)/y
  let total = 0
  let pos = 0
  if (value === '') return undefined
  while (pos < value.length) {
    part.lastIndex = pos
    const match = part.exec(value)
    if (!match) return undefined
    total += Number(match[1]) * unitMs[match[2]]
    pos = part.lastIndex
  }

  return Math.round(total)
}

/**
 * Go's time.Duration String() for whole milliseconds ("523ms", "1.234s", "2m3.5s", "1h0m0s"), as the
 * kubelet prints durations in its events.
 */
export function formatGoDuration(ms: number): string {
  const total = Math.max(0, Math.trunc(ms))
  if (total === 0) return '0s'
  if (total < 1000) return `${total}ms`
  const hours = Math.floor(total / 3_600_000)
  const minutes = Math.floor((total % 3_600_000) / 60_000)
  const secondsMs = total % 60_000
  const fraction = secondsMs % 1000
  const seconds = `${Math.floor(secondsMs / 1000)}${fraction ? `.${String(fraction).padStart(3, '0').replace(/0+$/, '')}` : ''}s`
  if (hours > 0) return `${hours}h${minutes}m${seconds}`
  if (minutes > 0) return `${minutes}m${seconds}`
  return seconds
}
