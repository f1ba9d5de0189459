/**
 * The first step of a garbage collection round (`podctl gc`, a supervisor's collector): the library's
 * reaper (workers/gone-sessions.ts). Pods the library started whose test process is gone (SIGKILLed,
 * crashed, a timed-out worker) are killed through their pod workers, with their grace period, logs and
 * directories, exactly as the next connect() would; only pods podctl can prove it made are taken.
 */
import type {PodSandbox} from '../../../generated/runtime/v1/api.js'
import {goneSessionOf, goneSessionPods} from '../../kube/library-session.js'
import {type GcRound, inRoundNamespace, removeDecided} from './round.js'

/**
 * How a round kills a gone session's pod: the pod workers' kill (workers/gone-sessions.ts's
 * sessionReaper), given by the caller, since garbage collection sits below the workers.
 */
export type PodReaper = (fullName: string, sandboxes: readonly PodSandbox[]) => Promise<void>

export interface ReapedPod {
  /** name_namespace. */
  pod: string
  /** Whose session it was: `pid 1234 (podctl library, vitest-7)`. */
  session: string
}

/** Kills (a dry run: lists) the library pods of the round's namespace whose session is gone. */
export async function collectGoneSessionPods(round: GcRound, reap: PodReaper): Promise<ReapedPod[]> {
  const {items} = await round.client.runtime('listPodSandbox', {filter: {}}, {signal: round.signal})
  const gone = goneSessionPods(items.filter(inRoundNamespace(round)))
  const reaped = await Promise.all(
    [...gone].map(async ([pod, sandboxes]) => {
      const session = goneSessionOf(sandboxes)
      const why = `podctl's library pod (io.podctl.library.worker) whose session, ${session}, is gone`
      const removed = await removeDecided(round, {kind: 'pod', object: pod, why, failureName: `pod ${pod}`}, () => reap(pod, sandboxes))
      return removed ? [{pod, session}] : []
    }),
  )
  return reaped.flat()
}
