/**
 * Flags more than one command uses, with their parsing and help text in one place (as
 * sf-plugins-core keeps them in src/flags/): durations and `-o`.
 */
import {Flags} from '@oclif/core'

import {UsageError} from './errors.js'
import type {OutputFormat} from './output/spec.js'
import {parseDuration} from './util/duration.js'

/** A duration flag ("10s", "500ms", "2m" or seconds) parsed to milliseconds. */
export const durationFlag = Flags.custom<number>({
  async parse(input, _context, opts) {
    const ms = parseDuration(input)
    if (ms === undefined) throw new UsageError(`--${opts.name} "${input}" is not a duration; use e.g. 10s, 500ms or 2m`)
    return ms
  },
})

export function outputFlag<F extends OutputFormat>(formats: readonly F[]) {
  return Flags.custom<F>({
    char: 'o',
    summary: `Output format: ${formats.join('|')}.`,
    options: [...formats],
    helpValue: formats.join('|'),
  })()
}
