/**
 * The garbage collection flags `podctl gc` takes and `sync --watch` can take: the kubelet's image GC
 * thresholds and minimum image age under the kubelet's own flag names, and the supervisor's period.
 */
import {Flags} from '@oclif/core'

import {UsageError} from '../../errors.js'
import {clampTimerMs, parseDuration} from '../../util/duration.js'
import {CONTAINER_GC_PERIOD_MS, DEFAULT_IMAGE_GC_POLICY, type ImageGcPolicy, validateImageGcPolicy} from './policy.js'

/**
 * A duration ("2m", "90s", "500ms" or seconds) in milliseconds, parsed as src/lib/flags.ts durationFlag
 * does; the kubelet wing may not import the command layer, so the flag is built here from the same parser.
 */
const durationFlag = Flags.custom<number>({
  async parse(input, _context, opts) {
    const ms = parseDuration(input)
    if (ms === undefined) throw new UsageError(`--${opts.name} "${input}" is not a duration; use e.g. 10s, 500ms or 2m`)
    return clampTimerMs(ms)
  },
  helpValue: 'DURATION',
})

/** A whole percentage 0..100, refused in one line naming the flag. */
const percentFlag = Flags.custom<number>({
  async parse(input, _context, opts) {
    const value = Number(input)
    if (!/^\d+$/.test(input.trim()) || value > 100)
      throw new UsageError(`--${opts.name} "${input}" is not a percentage; use a whole number 0 to 100`)
    return value
  },
  helpValue: 'PERCENT',
})

export const imageGcFlags = {
  'image-gc-high-threshold': percentFlag({
    summary: 'Image filesystem usage (percent) at which unused images are removed; 100 turns image GC off.',
    default: DEFAULT_IMAGE_GC_POLICY.highThresholdPercent,
  }),
  'image-gc-low-threshold': percentFlag({
    summary: 'Usage (percent) image GC frees down to; below the high threshold.',
    default: DEFAULT_IMAGE_GC_POLICY.lowThresholdPercent,
  }),
  'minimum-image-ttl-duration': durationFlag({
    summary: 'An unused image podctl first saw less than this ago is kept.',
    default: DEFAULT_IMAGE_GC_POLICY.minAgeMs,
    defaultHelp: async () => '2m',
  }),
}

/** For a supervisor (sync --watch): how often to collect; 0 = never. */
export const gcPeriodFlag = durationFlag({
  summary: 'How often the supervisor collects garbage (dead containers, empty sandboxes, logs; images every 5m); 0 = never.',
  default: CONTAINER_GC_PERIOD_MS,
  env: 'PODCTL_GC_PERIOD',
  defaultHelp: async () => '1m',
})

/** The image policy the flags give, checked (low below high). */
export function imageGcPolicyFromFlags(flags: {
  'image-gc-high-threshold': number
  'image-gc-low-threshold': number
  'minimum-image-ttl-duration': number
}): ImageGcPolicy {
  return validateImageGcPolicy({
    highThresholdPercent: flags['image-gc-high-threshold'],
    lowThresholdPercent: flags['image-gc-low-threshold'],
    minAgeMs: flags['minimum-image-ttl-duration'],
  })
}

/** Everything a supervisor (sync --watch) takes for garbage collection: the image flags and --gc-period. */
export const supervisorGcFlags = {...imageGcFlags, 'gc-period': gcPeriodFlag}
