/**
 * A supervisor's heap: the V8 flags its process sets. The young generation: V8 grows each of its
 * two semi-spaces from 1 MiB towards 16 MiB while many young objects survive a scavenge, and gives
 * the pages back only when it decides to reduce memory, which a process probing every second never
 * gets to: a supervisor of 35 probed pods
 * kept 32 MiB committed for 8–11 MiB in use, a quarter of its RSS. A supervisor allocates little
 * at a time (a probe, a listing a second), so from its start the semi-spaces stay at their size.
 * Measured against the CPU it costs (more, smaller scavenges) in docs/benchmarks.md.
 *
 * V8 reads the young generation's flag each time it would grow the new space (a semi-space size is fixed when the
 * process starts, so --max-semi-space-size cannot be set from here). Process-wide: only the
 * supervisor's own process should call keepSupervisorHeapSmall.
 *
 * The old generation likewise: V8 lets it grow well past what is live before a full collection
 * (43 MiB committed for 13 MiB used in a 35-pod supervisor). --optimize-for-size, read at each
 * collection, grows it by a smaller factor and collects sooner: 35 probed pods in 79 MB of RSS
 * instead of 87 (docs/benchmarks.md), for a CPU share within the spread of the runs.
 */
import {setFlagsFromString} from 'node:v8'

/** Each growth of the new space multiplies it by 1: it keeps the size it has. */
export const YOUNG_GENERATION_FLAG = '--semi-space-growth-factor=1'

/** The old generation grows by a smaller factor, and is collected sooner, than V8's default. */
export const OLD_GENERATION_FLAG = '--optimize-for-size'

export function keepSupervisorHeapSmall(): void {
  setFlagsFromString(YOUNG_GENERATION_FLAG)
  setFlagsFromString(OLD_GENERATION_FLAG)
}
