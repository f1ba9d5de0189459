/**
 * `status POD --wait-for`: polls one pod's status (getPodStatus) until a condition holds, and says
 * where the pod stands when it does not. podctl's own; the kubelet has no such wait.
 */
import type {CriClient} from '../../cri/client.js'
import {DeadlineExceededError, formatMs, NotFoundError} from '../../errors.js'
import {podFullName} from '../../kube/helpers.js'
import {getPodStatus, type PodStatusReport} from './pod-status.js'
import type {PodReadiness} from './probe-readiness.js'
import {PodFailedError} from '../core/reasons.js'
import {sleep} from '../../util/concurrency.js'

export type PodWaitCondition = 'running' | 'ready' | 'completed' | 'deleted'
export const POD_WAIT_CONDITIONS: readonly PodWaitCondition[] = ['running', 'ready', 'completed', 'deleted']

/** Whether `report` (undefined: the pod is gone) satisfies the condition. */
export function podConditionMet(condition: PodWaitCondition, report: PodStatusReport | undefined): boolean {
  if (condition === 'deleted') return report === undefined
  if (report === undefined) return false
  switch (condition) {
    case 'running':
      return report.phase === 'Running'
    case 'ready':
      // The probes decide too (PodReadiness): this is the runtime's half.
      return report.ready
    case 'completed':
      return report.phase === 'Succeeded' || report.phase === 'Failed'
  }
}

/** One line saying where a pod stands, e.g. "phase Pending; containers: init-db Exited(0), app Created". */
export function describePodState(report: PodStatusReport | undefined): string {
  if (report === undefined) return 'the pod does not exist'
  const seen = new Set<string>()
  const containers = report.containers
    .filter((container) => !seen.has(`${container.type}/${container.name}`) && seen.add(`${container.type}/${container.name}`))
    .map((container) => `${container.name} ${container.state}${container.exitCode === null ? '' : `(${container.exitCode})`}`)
  const sandbox = report.sandboxes[0]?.state ?? 'none'
  return `phase ${report.phase}, sandbox ${sandbox}; containers: ${containers.length > 0 ? containers.join(', ') : 'none'}`
}

/** Why a Failed pod failed: its newest failed container, kubelet style. */
export function describePodFailure(report: PodStatusReport): string {
  const failed = report.containers.find((container) => container.state === 'Exited' && container.exitCode !== 0)
  if (!failed) return `pod ${report.fullName} failed (${describePodState(report)})`
  const why = [failed.reason, failed.message].filter(Boolean).join(': ')
  const kind = failed.type === 'init' ? 'init ' : ''
  return `pod ${report.fullName} failed: ${kind}container ${failed.name} exited with code ${failed.exitCode}${why ? ` (${why})` : ''}`
}

export interface WaitForPodOptions {
  /** How long to wait in total. */
  timeoutMs: number
  /** Between polls; default 500 ms. */
  intervalMs?: number
  signal?: AbortSignal
  /** Called after every poll (e.g. to update a spinner). */
  onPoll?: (report: PodStatusReport | undefined) => void
  /**
   * Where podctl keeps its pods (status.json): while a supervisor (`sync --watch`) runs the pod's
   * probes, 'ready' is the readiness it records, as the kubelet's status is; only an unsupervised
   * pod is probed here.
   */
  podDirRoot?: string
  /** Filled, when a wait for ready ends, with the containers the in-process prober found ready (none when a supervisor probes). */
  probedReady?: Set<string>
}

/**
 * Polls the pod (all its sandboxes, found again by name and namespace each time so a new attempt is
 * seen) until the condition holds. Resolves to the last status (undefined once deleted). Throws
 * NotFound when the pod is gone (unless waiting for that), PodFailed when waiting for running/ready
 * on a Failed pod, and DeadlineExceeded with the pod's state when time runs out.
 */
export async function waitForPod(
  client: CriClient,
  pod: {name: string; namespace: string},
  condition: PodWaitCondition,
  options: WaitForPodOptions,
): Promise<PodStatusReport | undefined> {
  const deadline = performance.now() + options.timeoutMs
  const fullName = podFullName(pod.name, pod.namespace)
  // The prober (exec, HTTP, TCP and gRPC probes) loads only to wait for readiness: `status` without
  // --wait-for imports this module too, and starts faster without it.
  const readiness: PodReadiness | undefined =
    condition === 'ready' ? new (await import('./probe-readiness.js')).PodReadiness(client) : undefined
  try {
    for (;;) {
      const report = await currentPodStatus(client, pod, options.signal)
      options.onPoll?.(report)
      let supervisedUnready: string[] | undefined
      let met = podConditionMet(condition, report)
      if (met && readiness) {
        supervisedUnready = options.podDirRoot ? await supervisorUnready(client, report!, options.podDirRoot) : undefined
        met = supervisedUnready ? supervisedUnready.length === 0 : await readiness.update(report!)
        noteProbedReady(options.probedReady, supervisedUnready ? undefined : readiness)
      }

      if (met) return report
      if (report === undefined) throw new NotFoundError(`pod ${fullName} no longer exists (waited for ${condition})`)
      if ((condition === 'running' || condition === 'ready') && report.phase === 'Failed') {
        throw new PodFailedError(`${describePodFailure(report)}; it will not become ${condition}`)
      }

      const left = deadline - performance.now()
      if (left <= 0) {
        const unready = supervisedUnready ? `${supervisedUnready.join(', ')} (as the supervisor records)` : readiness?.describe(report)
        throw new DeadlineExceededError(
          `pod ${fullName} is not ${condition} after ${formatMs(options.timeoutMs)}: ${describePodState(report)}` +
            (unready ? `; not ready: ${unready}` : ''),
        )
      }

      await sleep(Math.min(options.intervalMs ?? 500, left), options.signal)
    }
  } finally {
    await readiness?.stop()
  }
}

/** What this wait's prober found ready, for the status it ends with (nothing when a supervisor probes the pod). */
function noteProbedReady(into: Set<string> | undefined, readiness: PodReadiness | undefined): void {
  into?.clear()
  for (const id of readiness?.readyContainers() ?? []) into?.add(id)
}

/** The app containers the pod's supervisor records as not ready; undefined when no supervisor runs. */
async function supervisorUnready(client: CriClient, report: PodStatusReport, podDirRoot: string): Promise<string[] | undefined> {
  const {podConditions} = await import('./status-manager.js')
  const {supervised, containerStatuses} = await podConditions(client, report, podDirRoot)
  if (!supervised) return undefined
  return containerStatuses.filter((status) => status.type === 'app' && !status.ready).map((status) => status.name)
}

/** The pod's status now, or undefined when no sandbox of that name and namespace exists. */
async function currentPodStatus(
  client: CriClient,
  pod: {name: string; namespace: string},
  signal?: AbortSignal,
): Promise<PodStatusReport | undefined> {
  const {items} = await client.runtime('listPodSandbox', {filter: {labelSelector: {}}}, {signal})
  const sandboxes = items.filter((sandbox) => sandbox.metadata?.name === pod.name && sandbox.metadata?.namespace === pod.namespace)
  if (sandboxes.length === 0) return undefined
  try {
    return await getPodStatus(client, sandboxes)
  } catch (error) {
    // Removed between the listing and the status calls.
    if (error instanceof NotFoundError) return undefined
    throw error
  }
}
