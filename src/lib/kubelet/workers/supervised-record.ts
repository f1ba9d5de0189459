/**
 * The supervisor's view of a pod's record (pod.json), followed on every turn: removed by `kill`,
 * rewritten by `sync -f`.
 */
import {statSync} from 'node:fs'

import {type EventSink, normalEvent} from '../../kube/events.js'
import type {PodModel} from '../../manifest/model.js'
import {desiredPodPath, readDesiredPod} from '../config/desired-state.js'
import type {SupervisorLocks} from '../config/supervisor-lock.js'

/** What the supervisor keeps of a pod that this follows. */
export interface FollowedPod {
  pod?: PodModel
  /** Containers handed to the prober. */
  registered: Set<string>
  fingerprint: string
  /** pod.json's mtime when `pod` was read: a newer one (sync -f) is read again. */
  recordMtimeMs?: number
}

/**
 * Follows the pod's record (pod.json) each turn. `kill` removes it before it stops anything, so a
 * pod being killed is let go at once (probes stopped, lock released, said once) rather than
 * restarted or recreated under the kill, as the kubelet drops a deleted pod before killing it.
 * `sync -f` rewrites it before it acts, so the supervisor takes the new spec (Updated) instead of
 * reverting what the apply changed. False when the pod is no longer to be supervised.
 */
export async function followRecord(
  fullName: string,
  state: FollowedPod,
  {locks, podDirRoot}: {locks: SupervisorLocks; podDirRoot: string},
  deps: {events: EventSink; prober?: {removeContainer(id: string): void}},
): Promise<boolean> {
  const {pod} = state
  if (!pod) return false
  const info = recordStat(desiredPodPath(podDirRoot, pod.uid))
  if (info) {
    if (state.recordMtimeMs !== undefined && info.mtimeMs !== state.recordMtimeMs) {
      const updated = await readDesiredPod(podDirRoot, pod.uid)
      if (updated) {
        state.pod = updated
        state.fingerprint = ''
        deps.events(normalEvent('Updated', 'The pod was applied again (its pod.json changed): supervising the new spec', fullName))
      }
    }

    state.recordMtimeMs = info.mtimeMs
    return true
  }

  for (const id of state.registered) deps.prober?.removeContainer(id)
  state.registered.clear()
  state.pod = undefined
  await locks.release(pod.uid)
  deps.events(normalEvent('Forgotten', 'The pod was killed (its pod.json is gone): no longer supervised', fullName))
  return false
}

/** Every turn of every pod: one stat without a thread-pool round trip; undefined when the record cannot be seen. */
function recordStat(path: string): {mtimeMs: number} | undefined {
  try {
    return statSync(path, {throwIfNoEntry: false})
  } catch {
    return undefined
  }
}
