/**
 * One pod's status the kubelet's way (kuberuntime_manager.go GetPodStatus) plus the phase its
 * getPhase (pkg/kubelet/kubelet_pods.go) would compute, from the runtime alone: the container type
 * and restart policy come from podctl's annotations, with the Kubernetes defaults when absent.
 */
import type {CriClient} from '../cri/client.js'
import {DeadlineExceededError, formatMs, NotFoundError} from '../errors.js'
import type {ContainerStatus, PodSandbox, PodSandboxStatus} from '../../generated/runtime/v1/api.js'
import {newestFirst, podFullName, sandboxIps, toKubeContainerState, type KubeContainerState} from '../kube/helpers.js'
import {containerName, containerTypeOf, podUidOf, restartPolicyOf, type ContainerType, type RestartPolicy} from '../kube/labels.js'
import {mapLimit, RUNTIME_CALLS_IN_FLIGHT, sleep} from '../util/concurrency.js'
import {nanosToIso} from '../util/time.js'
import {PodFailedError} from './reasons.js'

export type PodPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown'
export type SandboxStateName = 'Ready' | 'NotReady'

export interface SandboxReport {
  id: string
  attempt: number
  state: SandboxStateName
  /** RFC 3339 */
  createdAt: string | null
  ip: string | null
}

export interface ContainerReport {
  name: string
  id: string
  podSandboxId: string
  state: KubeContainerState
  type: ContainerType
  image: string
  imageRef: string
  attempt: number
  createdAt: string | null
  startedAt: string | null
  finishedAt: string | null
  exitCode: number | null
  reason: string
  message: string
}

export interface PodStatusReport {
  name: string
  namespace: string
  uid: string
  fullName: string
  phase: PodPhase
  /** From the newest sandbox only, and only when it is READY (the kubelet's rule). */
  ip: string | null
  ips: string[]
  restartPolicy: RestartPolicy
  /** Phase Running, every app container running, newest sandbox ready. */
  ready: boolean
  sandboxes: SandboxReport[]
  containers: ContainerReport[]
}

/** The kubelet's GetPodStatus for the sandboxes of one pod (all attempts), plus a phase computed the kubelet's way. */
export async function getPodStatus(client: CriClient, sandboxes: PodSandbox[]): Promise<PodStatusReport> {
  const ordered = [...sandboxes].sort(newestFirst)
  const [sandboxStatuses, {containers: listed}] = await Promise.all([
    mapLimit(ordered, RUNTIME_CALLS_IN_FLIGHT, (sandbox) =>
      skipNotFound(client.runtime('podSandboxStatus', {podSandboxId: sandbox.id, verbose: false}).then((r) => r.status)),
    ),
    client.runtime('listContainers', {filter: {}}),
  ])
  const statuses = sandboxStatuses.filter((status): status is PodSandboxStatus => status !== undefined)
  if (statuses.length === 0) {
    const first = ordered[0]
    const what = first ? `pod "${podFullName(first.metadata?.name ?? '', first.metadata?.namespace ?? '')}"` : 'pod'
    throw new NotFoundError(`${what} no longer exists; list pods with: podctl pods`)
  }

  // The kubelet selects by the io.kubernetes.pod.uid label; pods made without it (crictl) by sandbox ID.
  const ids = new Set(ordered.map((sandbox) => sandbox.id))
  const uids = new Set(ordered.map((sandbox) => sandbox.metadata?.uid).filter((uid): uid is string => Boolean(uid)))
  const ofPod = listed.filter((container) => {
    const uid = podUidOf(container.labels)
    return uid ? uids.has(uid) : ids.has(container.podSandboxId)
  })
  const containerStatuses = (
    await mapLimit(ofPod, RUNTIME_CALLS_IN_FLIGHT, async (container) => {
      const status = await skipNotFound(
        client.runtime('containerStatus', {containerId: container.id, verbose: false}).then((r) => r.status),
      )
      return status && {status, podSandboxId: container.podSandboxId}
    })
  ).filter((entry): entry is {status: ContainerStatus; podSandboxId: string} => Boolean(entry))

  const newest = statuses[0]
  const restartPolicy = restartPolicyOf(newest.annotations, ordered[0].annotations)
  const ips = newest.state === 'SANDBOX_READY' ? sandboxIps(newest) : []
  const containers = containerStatuses
    .sort((a, b) => newestFirst(a.status, b.status))
    .map(({status, podSandboxId}) => toContainerReport(status, podSandboxId))
  const phaseInput: PhaseInput = {
    restartPolicy,
    sandboxReady: newest.state === 'SANDBOX_READY',
    containers: containers.map(({name, type, state, exitCode}) => ({name, type, state, exitCode})),
  }
  const phase = computePhase(phaseInput)

  return {
    name: newest.metadata?.name ?? '',
    namespace: newest.metadata?.namespace ?? '',
    uid: newest.metadata?.uid ?? '',
    fullName: podFullName(newest.metadata?.name ?? '', newest.metadata?.namespace ?? ''),
    phase,
    ip: ips[0] ?? null,
    ips,
    restartPolicy,
    ready: isPodReady(phase, phaseInput),
    sandboxes: statuses.map((status) => ({
      id: status.id,
      attempt: status.metadata?.attempt ?? 0,
      state: status.state === 'SANDBOX_READY' ? 'Ready' : 'NotReady',
      createdAt: nanosToIso(status.createdAt),
      ip: status.network?.ip || null,
    })),
    containers,
  }
}

function toContainerReport(status: ContainerStatus, podSandboxId: string): ContainerReport {
  const state = toKubeContainerState(status.state)
  return {
    name: containerName(status),
    id: status.id,
    podSandboxId,
    state,
    type: containerTypeOf(status.annotations),
    image: status.image?.userSpecifiedImage || status.image?.image || '',
    imageRef: status.imageRef || status.imageId,
    attempt: status.metadata?.attempt ?? 0,
    createdAt: nanosToIso(status.createdAt),
    // Like toKubeContainerStatus: started unless still CREATED, finished/exit code only once EXITED.
    startedAt: state === 'Created' ? null : nanosToIso(status.startedAt),
    finishedAt: state === 'Exited' ? nanosToIso(status.finishedAt) : null,
    exitCode: state === 'Exited' ? status.exitCode : null,
    reason: status.reason,
    message: status.message,
  }
}

async function skipNotFound<T>(call: Promise<T>): Promise<T | undefined> {
  try {
    return await call
  } catch (error) {
    if (error instanceof NotFoundError) return undefined
    throw error
  }
}

/** What the phase depends on; containers newest first (every attempt), as getPodStatus reports them. */
export interface PhaseInput {
  restartPolicy: RestartPolicy
  /** Whether the newest sandbox is READY. */
  sandboxReady: boolean
  containers: ReadonlyArray<Pick<ContainerReport, 'name' | 'type' | 'state' | 'exitCode'>>
}

interface NamedContainerState {
  /** The newest attempt's state. */
  state: KubeContainerState
  exitCode: number | null
  /** The exit code of the newest earlier attempt that exited (the kubelet's LastTerminationState). */
  lastExitCode: number | null
}

/**
 * The kubelet's getPhase, with the spec replaced by what the runtime holds: one "spec container"
 * per container name and type, its state taken from the newest attempt and its last termination
 * from the attempts before (as convertToAPIContainerStatuses does).
 *
 * Without a kubelet nothing restarts a pod whose sandbox is stopped, so when the newest sandbox is
 * not READY and no container runs, the pod is treated as terminal (the kubelet's podIsTerminal
 * branch): Succeeded when every app container exited 0, else Failed, whatever the restart policy.
 * A stopped pod that never ran its app containers is Failed too: it cannot get further.
 */
export function computePhase(input: PhaseInput): PodPhase {
  const byName = latestByName(input.containers)
  const init = [...byName.values()].filter((entry) => entry.type === 'init')
  const app = [...byName.values()].filter((entry) => entry.type === 'app')
  const anyRunning = input.containers.some((container) => container.state === 'Running')
  const terminal = !input.sandboxReady && !anyRunning

  let pendingInitialization = 0
  let failedInitialization = 0
  for (const {state, exitCode, lastExitCode} of init) {
    if (state === 'Exited') {
      if (exitCode !== 0) failedInitialization++
    } else if (state === 'Created' && lastExitCode !== null) {
      // Waiting to restart after a previous run.
      if (lastExitCode !== 0) failedInitialization++
    } else {
      pendingInitialization++
    }
  }

  let unknown = 0
  let running = 0
  let waiting = 0
  let stopped = 0
  let succeeded = 0
  for (const {state, exitCode, lastExitCode} of app) {
    if (state === 'Running') running++
    else if (state === 'Exited') {
      stopped++
      if (exitCode === 0) succeeded++
    } else if (state === 'Created') {
      if (lastExitCode === null) waiting++
      // Waiting to restart after a run: stopped, but (as in getPhase) never counted as succeeded.
      else stopped++
    } else unknown++
  }

  if (failedInitialization > 0 && (input.restartPolicy === 'Never' || terminal)) return 'Failed'
  if (terminal) {
    if (app.length > 0 && stopped === app.length) return stopped === succeeded ? 'Succeeded' : 'Failed'
    return 'Failed'
  }

  // Init containers still to run; the app containers have not started.
  if (pendingInitialization > 0 && running === 0 && stopped === 0) return 'Pending'
  // No app container created yet: the kubelet reports the spec's containers as waiting.
  if (app.length === 0 || waiting > 0) return 'Pending'
  if (running > 0 && unknown === 0) return 'Running'
  if (running === 0 && stopped > 0 && unknown === 0) {
    if (input.restartPolicy === 'Always') return 'Running'
    if (stopped === succeeded) return 'Succeeded'
    if (input.restartPolicy === 'Never') return 'Failed'
    return 'Running'
  }

  return 'Pending'
}

/** The ready condition `status --wait-for ready` and `run --wait` check. */
export function isPodReady(phase: PodPhase, input: PhaseInput): boolean {
  if (phase !== 'Running' || !input.sandboxReady) return false
  const app = [...latestByName(input.containers).values()].filter((entry) => entry.type === 'app')
  return app.length > 0 && app.every((entry) => entry.state === 'Running')
}

function latestByName(containers: PhaseInput['containers']): Map<string, NamedContainerState & {type: ContainerType}> {
  const byName = new Map<string, NamedContainerState & {type: ContainerType}>()
  for (const container of containers) {
    const key = `${container.type}/${container.name}`
    const seen = byName.get(key)
    if (!seen) byName.set(key, {type: container.type, state: container.state, exitCode: container.exitCode, lastExitCode: null})
    else if (seen.lastExitCode === null && container.state === 'Exited') seen.lastExitCode = container.exitCode
  }

  return byName
}

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
  return `phase ${report.phase}, sandbox ${sandbox}; containers: ${containers.length ? containers.join(', ') : 'none'}`
}

/** Why a Failed pod failed: its newest failed container, kubelet style. */
export function describePodFailure(report: PodStatusReport): string {
  const failed = report.containers.find((container) => container.state === 'Exited' && container.exitCode !== 0)
  if (!failed) return `pod ${report.fullName} failed (${describePodState(report)})`
  const why = [failed.reason, failed.message].filter(Boolean).join(': ')
  return `pod ${report.fullName} failed: ${failed.type === 'init' ? 'init ' : ''}container ${failed.name} exited with code ${failed.exitCode}${why ? ` (${why})` : ''}`
}

export interface WaitForPodOptions {
  /** How long to wait in total. */
  timeoutMs: number
  /** Between polls; default 500 ms. */
  intervalMs?: number
  signal?: AbortSignal
  /** Called after every poll (e.g. to update a spinner). */
  onPoll?: (report: PodStatusReport | undefined) => void
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
  for (;;) {
    const report = await currentPodStatus(client, pod, options.signal)
    options.onPoll?.(report)
    if (podConditionMet(condition, report)) return report
    if (report === undefined) throw new NotFoundError(`pod ${fullName} no longer exists (waited for ${condition})`)
    if ((condition === 'running' || condition === 'ready') && report.phase === 'Failed') {
      throw new PodFailedError(`${describePodFailure(report)}; it will not become ${condition}`)
    }

    const left = deadline - performance.now()
    if (left <= 0) {
      throw new DeadlineExceededError(
        `pod ${fullName} is not ${condition} after ${formatMs(options.timeoutMs)}: ${describePodState(report)}`,
      )
    }

    await sleep(Math.min(options.intervalMs ?? 500, left), options.signal)
  }
}

/** The pod's status now, or undefined when no sandbox of that name and namespace exists. */
export async function currentPodStatus(
  client: CriClient,
  pod: {name: string; namespace: string},
  signal?: AbortSignal,
): Promise<PodStatusReport | undefined> {
  const {items} = await client.runtime('listPodSandbox', {filter: {labelSelector: {}}}, {signal})
  const sandboxes = items.filter((sandbox) => sandbox.metadata?.name === pod.name && sandbox.metadata?.namespace === pod.namespace)
  if (sandboxes.length === 0) return undefined
  return skipNotFound(getPodStatus(client, sandboxes))
}
