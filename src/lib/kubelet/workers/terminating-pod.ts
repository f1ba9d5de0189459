/**
 * A supervised pod whose termination is recorded (config/termination.ts): the supervisor's worker
 * says so once, stops probing it and never restarts or recreates it; its SyncPod pass finishes the
 * termination (pod-workers.ts), at once, then again every TERMINATE_RETRY_MS while the runtime does
 * not let it, or at once when the runtime is back.
 */
import {type EventSink, normalEvent, warningEvent} from '../../kube/events.js'
import {readTermination} from '../config/termination-record.js'
import type {PodSyncResult} from '../kuberuntime/sync-pod.js'

/** A recorded termination the runtime did not let finish is asked again this often. */
const TERMINATE_RETRY_MS = 2000

/** What the worker keeps of a pod's termination. */
export interface TerminationFollow {
  /** Epoch ms: when to ask again after a failure (0: at once). */
  terminateAt: number
  /** Terminating was said for this uid. */
  toldTerminating?: boolean
}

/** false: not terminating; true: terminate now; 'later': terminating, asked again after its pause. */
export function terminationDue(
  follow: TerminationFollow,
  {podDirRoot, uid, fullName, events}: {podDirRoot: string; uid: string; fullName: string; events: EventSink},
): boolean | 'later' {
  const intent = readTermination(podDirRoot, uid)
  if (intent === undefined) return false
  if (!follow.toldTerminating) {
    follow.toldTerminating = true
    events(normalEvent('Terminating', `${intent.requestedBy} asked for its termination: no longer probed or restarted`, fullName))
  }

  return Date.now() < follow.terminateAt ? 'later' : true
}

/** The pass that carried the termination out (the pod goes at the next listing) or did not (asked again after a pause). */
export function terminationDone(
  follow: TerminationFollow,
  result: PodSyncResult,
  {fullName, events}: {fullName: string; events: EventSink},
): void {
  if (!result.failure) {
    events(normalEvent('Terminated', result.did.join('; '), fullName))
    return
  }

  events(warningEvent('FailedKillPod', result.failure.message, fullName))
  follow.terminateAt = Date.now() + TERMINATE_RETRY_MS
}
