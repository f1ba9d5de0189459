/**
 * What a failed or interrupted run leaves behind, removed: every sandbox podctl made for the pod
 * (kube/ownership.ts; killed the kubelet's way) and its directory (unless another runtime records
 * it), retried while the runtime still holds on to a container; the same for `run` (run/run-pod.ts)
 * and SyncPod's recreation (recreate-pod.ts).
 */
import type {CriClient} from '../../cri/client.js'
import {asPodctlError, type PodctlError} from '../../errors.js'
import {discardEvents, type EventSink} from '../../kube/events.js'
import {shortId} from '../../kube/helpers.js'
import type {PodModel} from '../../manifest/model.js'
import {sleep} from '../../util/concurrency.js'
import {killPod} from './kill.js'
import {removePodDirectory} from '../volumes/pod-dirs.js'
import {sandboxOwnership} from '../../kube/ownership.js'
import {PodFailedError, withMessage} from '../core/reasons.js'
import {podSandboxes} from './sandbox.js'
import {removeEmptyPodLogDirectory} from '../core/owned-logs.js'

/** How long a rollback keeps trying: a runtime that just started a container may refuse to remove it for seconds. */
export const ROLLBACK_BUDGET_MS = 30_000
const ROLLBACK_RETRY_MS = 250

export interface Removal {
  /** Some sandbox of the pod existed (and is gone now, unless error). */
  found: boolean
  sandboxIds: string[]
  attempts: number
  ms: number
  error?: PodctlError
}

export interface RemovalOptions {
  events: EventSink
  podDirRoot: string
  /**
   * A failed recreation of a pod that lives on (recreate-pod.ts): only sandboxes of this attempt
   * or newer (what the failed run made) are removed; the older ones and the pod's directory (the
   * data of its volumes) stay.
   */
  fromAttempt?: number
  /** The pods' log root: the pod's log directory podctl made goes too (kill.ts's proof); none: it stays. */
  podLogsRoot?: string
}

/**
 * Kills every sandbox of the pod and removes its directory (with fromAttempt: only what a failed
 * recreation made), retrying until the runtime lets go (bounded by ROLLBACK_BUDGET_MS). Its calls
 * may outlive the command's deadline: a run that timed out must still not leave a pod behind.
 */
export async function removePodRemains(client: CriClient, pod: PodModel, options: RemovalOptions): Promise<Removal> {
  const {fromAttempt} = options
  const started = Date.now()
  const removal: Removal = {found: false, sandboxIds: [], attempts: 0, ms: 0}
  for (;;) {
    removal.attempts++
    try {
      // Only what podctl made: a sandbox of another tool that shares the pod's uid and name is not the run's.
      const sandboxes = (await podSandboxes(client, pod, {cleanup: true})).filter(
        (sandbox) => sandboxOwnership(sandbox).ours && (fromAttempt === undefined || (sandbox.metadata?.attempt ?? 0) >= fromAttempt),
      )
      removal.sandboxIds = sandboxes.map((sandbox) => sandbox.id)
      removal.found ||= sandboxes.length > 0
      // Events on the first attempt only: retries would repeat the same Killing lines.
      const events = removal.attempts === 1 ? options.events : discardEvents
      const keepPodDirectory = fromAttempt !== undefined
      if (sandboxes.length > 0)
        await killPod(client, sandboxes, {
          events,
          cleanup: true,
          podDirRoot: options.podDirRoot,
          podLogsRoot: options.podLogsRoot,
          keepPodDirectory,
        })
      if (!keepPodDirectory) await removePodDirectory(options.podDirRoot, pod.uid, client.runtimeEndpoint)
      removal.error = undefined
      break
    } catch (error) {
      removal.error = asPodctlError(error)
      if (Date.now() + ROLLBACK_RETRY_MS - started > ROLLBACK_BUDGET_MS) break
      await sleep(ROLLBACK_RETRY_MS)
    }
  }

  removal.ms = Date.now() - started
  return removal
}

export function formatSeconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`
}

export interface RollBackOptions extends RemovalOptions {
  /** The sandbox the failed run made, when RunPodSandbox answered (named when the rollback cannot finish). */
  sandboxId?: string
  /** Where the pod's container logs are, when it created containers (they stay, unless empty: emptyLogDirectory). */
  logDirectory?: string
  /**
   * The pod's log directory, to remove when podctl made it and it holds nothing but podctl's mark (a
   * failed pull, a container that never wrote): an empty directory is no log to keep.
   */
  emptyLogDirectory?: string
  /** A failed recreation: the attempts of the stopped sandboxes the pod keeps, with its volumes. */
  keptAttempts?: readonly number[]
  /** The pod's termination was recorded before the rollback (pod-workers.ts): what is left is finished by its next sync. */
  terminationRecorded?: boolean
}

/**
 * Removes what a failed run or recreation made (removePodRemains) and says so in the failure's
 * message: "(rolled back…)", or exactly what is left behind and how to remove it.
 */
export async function rollBackPod(
  client: CriClient,
  pod: PodModel,
  failure: PodctlError,
  options: RollBackOptions,
): Promise<{failure: PodctlError; rolledBack: boolean}> {
  const object = `${pod.name}_${pod.namespace}`
  const removal = await removePodRemains(client, pod, options)
  // A failure may carry the crashed container's log lines after its first line: what is said here goes on that line.
  const [first, ...rest] = failure.message.split('\n')
  let message = first
  let rolledBack = false
  if (removal.error === undefined) {
    rolledBack = removal.found || options.sandboxId !== undefined
  } else {
    const left =
      removal.sandboxIds.length > 0
        ? removal.sandboxIds.map(shortId).join(', ')
        : options.sandboxId
          ? shortId(options.sandboxId)
          : 'unknown'
    // A supervisor keeps pods whose termination is recorded selected (sync --watch finishes them once the runtime answers).
    const finisher = options.terminationRecorded
      ? '; its termination is recorded, so a supervisor or podctl sync of it finishes it once the runtime answers, or remove it with'
      : '; remove it with'
    message +=
      `; rolling back failed for ${formatSeconds(removal.ms)} (${removal.error.message}): ` +
      `left behind pod ${object} (sandbox ${left})${finisher}: podctl kill ${pod.name} -n ${pod.namespace}`
  }

  if (rolledBack) {
    const retried = removal.attempts > 1 ? ` after ${removal.attempts} attempts in ${formatSeconds(removal.ms)}` : ''
    const emptied = options.emptyLogDirectory
      ? await removeEmptyPodLogDirectory(options.emptyLogDirectory, pod.uid, client.runtimeEndpoint).catch(() => false)
      : false
    const logPath = failure instanceof PodFailedError && !emptied ? failure.logPath : undefined
    const logs = logPath
      ? `; its log stays in ${logPath}`
      : options.logDirectory && !emptied
        ? `; container logs stay in ${options.logDirectory}`
        : ''
    message += ` (rolled back${retried}${logs})`
  }

  const kept = options.keptAttempts?.join(', ')
  if (kept) message += `; the pod keeps its volumes and its stopped sandbox (attempt ${kept})`
  message = [message, ...rest].join('\n')
  return {failure: message === failure.message ? failure : withMessage(failure, message), rolledBack}
}
