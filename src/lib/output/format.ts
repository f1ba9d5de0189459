/** Text formatting shared by every table: IDs, ages, sizes. Pure functions, unit tested. */
import {shortId} from '../kube/helpers.js'
import {nanosToMs} from '../util/time.js'

// Tables and commands have always taken these from here; they live with the other time conversions.
export {compareNanosDesc, nanosToIso, nanosToMs} from '../util/time.js'

/** crictl's rule (kube/helpers shortId): drop an algorithm prefix ("sha256:") then keep 13 characters; --no-trunc keeps all. */
export function truncateId(id: string, noTrunc = false): string {
  return noTrunc ? id : shortId(id)
}

/**
 * "3 minutes ago" — the human duration crictl and docker print (go-units HumanDuration),
 * so ages read the same in podctl as in the tools users know.
 */
export function humanAge(createdNanos: string | number | bigint, nowMs = Date.now()): string {
  return `${humanDuration(nowMs - nanosToMs(createdNanos))} ago`
}

export function humanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000)
  if (seconds < 1) return 'Less than a second'
  if (seconds === 1) return '1 second'
  if (seconds < 60) return `${seconds} seconds`
  const minutes = Math.floor(seconds / 60)
  if (minutes === 1) return 'About a minute'
  if (minutes < 60) return `${minutes} minutes`
  const hours = Math.round(seconds / 3600)
  if (hours === 1) return 'About an hour'
  if (hours < 48) return `${hours} hours`
  if (hours < 24 * 7 * 2) return `${Math.floor(hours / 24)} days`
  if (hours < 24 * 30 * 2) return `${Math.floor(hours / 24 / 7)} weeks`
  if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24 / 30)} months`
  return `${Math.floor(hours / 24 / 365)} years`
}

const DECIMAL_UNITS = ['B', 'kB', 'MB', 'GB', 'TB', 'PB', 'EB']

/** Decimal size with 3 significant digits ("4.19MB"), like crictl and docker. */
export function humanSize(bytes: number | string | bigint): string {
  let size = Number(bytes)
  let unit = 0
  while (size >= 1000 && unit < DECIMAL_UNITS.length - 1) {
    size /= 1000
    unit++
  }

  return `${Number(size.toPrecision(3))}${DECIMAL_UNITS[unit]}`
}
