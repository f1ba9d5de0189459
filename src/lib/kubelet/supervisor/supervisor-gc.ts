/**
 * A supervisor's garbage collection (`sync --watch --gc-period`): the kubelet's rounds
 * (gc/collector.ts), each killing first, through the pod workers, the library's pods whose test
 * process is gone (workers/gone-sessions.ts) — the same reaper as the library's connect() and `podctl gc`.
 */
import type {CriClient} from '../../cri/client.js'
import type {EventSink} from '../../kube/events.js'
import {type GarbageCollector, supervisorCollector} from '../gc/collector.js'
import {sessionReaper} from '../workers/gone-sessions.js'

export function supervisorGarbage(
  client: CriClient,
  flags: Parameters<typeof supervisorCollector>[1],
  settings: {logsRoot: string; podDirRoot: string},
  events: EventSink,
): GarbageCollector | undefined {
  const reapPod = sessionReaper(client, {
    podDirRoot: settings.podDirRoot,
    podLogsRoot: settings.logsRoot,
    requestedBy: 'the supervisor (sync --watch)',
  })
  return supervisorCollector(client, flags, settings, {events, reapPod})
}
