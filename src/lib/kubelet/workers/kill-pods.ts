/**
 * Killing several pods at once, as `kill` does: each pod through its worker (pod-workers.ts: its
 * termination recorded, then the kubelet's kill, kuberuntime/kill.ts), at most `parallel` at a time,
 * and one pod's failure never stops the others.
 */
import type {CriClient} from '../../cri/client.js'
import {ExitCode, PodctlError} from '../../errors.js'
import {settleLimit} from '../../util/concurrency.js'
import type {PodSandbox} from '../../../generated/runtime/v1/api.js'
import {KillPodError, type KillPodResult} from '../kuberuntime/kill.js'
import {podWorkers, type TerminateOptions} from './pod-workers.js'

export interface PodToKill {
  /** name_namespace */
  fullName: string
  /** Every attempt of the pod. */
  sandboxes: PodSandbox[]
}

/**
 * What a user's kill (`kill`, `rmp`, `stopp`) asks of each pod's worker: the pod is no longer wanted,
 * so its termination is recorded first (nothing brings it back, and a kill left undone is finished
 * later); a runtime that does not answer is asked again until the command's deadline; a podctl at
 * work on the pod is waited for.
 */
export function userKill(
  requestedBy: string,
  deadline: number | undefined,
  onWait: (fullName: string, holderPid: number) => void,
): Pick<TerminateOptions, 'forget' | 'lock' | 'requestedBy' | 'retryUntil'> {
  return {forget: true, requestedBy, retryUntil: deadline, lock: {onWait}}
}

export interface KillPodsOptions extends TerminateOptions {
  parallel: number
  /** After each pod, killed or not (for progress). */
  onSettled?: () => void
  /** Each pod killed, as soon as it is. */
  onKilled?: (result: KillPodResult) => void
}

export interface KillPodsOutcome {
  /** Pods killed, and pods partly killed before they failed, in pod order. */
  items: KillPodResult[]
  /** Why each failed pod failed, in pod order. */
  failures: Array<{pod: string; error: PodctlError}>
}

export async function killPods(client: CriClient, pods: readonly PodToKill[], options: KillPodsOptions): Promise<KillPodsOutcome> {
  const {parallel, onSettled, onKilled, ...killOptions} = options
  const settled = await settleLimit(pods, parallel, async (pod) => {
    const result = await podWorkers.terminate(client, pod.fullName, pod.sandboxes, killOptions).finally(() => onSettled?.())
    onKilled?.(result)
    return result
  })
  const outcome: KillPodsOutcome = {items: [], failures: []}
  for (const [index, settledPod] of settled.entries()) {
    if (settledPod.status === 'fulfilled') {
      outcome.items.push(settledPod.value)
      continue
    }

    const error = settledPod.reason
    if (error instanceof KillPodError) outcome.items.push(error.result)
    const failure =
      error instanceof PodctlError ? error : new PodctlError('InternalError', ExitCode.INTERNAL, String(error?.message ?? error))
    outcome.failures.push({pod: pods[index].fullName, error: failure})
  }

  return outcome
}
