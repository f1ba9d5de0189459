/**
 * A supervisor's young generation. V8 grows each of its two semi-spaces from 1 MiB towards 16 MiB
 * while many young objects survive a scavenge, and gives the pages back only when it decides to
 * reduce memory, which a process probing every second never gets to: a supervisor of 35 probed pods
 * kept 32 MiB committed for 8–11 MiB in use, a quarter of its RSS. A supervisor allocates little
 * at a time (a probe, a listing a second), so from its start the semi-spaces stay at their size.
 * Measured against the CPU it costs (more, smaller scavenges) in docs/benchmarks.md.
 *
 * V8 reads this flag each time it would grow the new space (a semi-space size is fixed when the
 * process starts, so --max-semi-space-size cannot be set from here). Process-wide: only the
 * supervisor's own process should call it.
 */
import {setFlagsFromString} from 'node:v8'

/** Each growth of the new space multiplies it by 1: it keeps the size it has. */
export const YOUNG_GENERATION_FLAG = '--semi-space-growth-factor=1'

export function keepYoungGenerationSmall(): void {
  setFlagsFromString(YOUNG_GENERATION_FLAG)
}
