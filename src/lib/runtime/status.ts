import type {CriClient} from '../cri/client.js'
import {mapLimit} from '../concurrency.js'
import {NotFoundError} from '../errors.js'
import {nanosToIso} from '../output/format.js'
import type {ContainerStatus, PodSandbox, PodSandboxStatus} from '../../generated/runtime/v1/api.js'
import {containerName} from './kill.js'
import {PodctlAnnotation, PodLabel, podFullName, type ContainerType, type RestartPolicy} from './labels.js'
import {newestFirst, sandboxIps} from './pods.js'

/**
 * One pod's status the kubelet's way (kuberuntime_manager.go GetPodStatus) plus the phase its
 * getPhase (pkg/kubelet/kubelet_pods.go) would compute, from the runtime alone: the container type
 * and restart policy come from podctl's annotations, with the Kubernetes defaults when absent.
 */

export type PodPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown'
export type SandboxStateName = 'Ready' | 'NotReady'
export type ContainerStateName = 'Created' | 'Running' | 'Exited' | 'Unknown'

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
  state: ContainerStateName
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

/** At most this many PodSandboxStatus / ContainerStatus calls in flight. */
export const STATUS_CONCURRENCY = 8

/** The kubelet's GetPodStatus for the sandboxes of one pod (all attempts), plus a phase computed the kubelet's way. */
export async function getPodStatus(client: CriClient, sandboxes: PodSandbox[]): Promise<PodStatusReport> {
  const ordered = [...sandboxes].sort(newestFirst)
  const [sandboxStatuses, {containers: listed}] = await Promise.all([
    mapLimit(ordered, STATUS_CONCURRENCY, (sandbox) =>
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
    const uid = container.labels[PodLabel.uid]
    return uid ? uids.has(uid) : ids.has(container.podSandboxId)
  })
  const containerStatuses = (
    await mapLimit(ofPod, STATUS_CONCURRENCY, async (container) => {
      const status = await skipNotFound(
        client.runtime('containerStatus', {containerId: container.id, verbose: false}).then((r) => r.status),
      )
      return status && {status, podSandboxId: container.podSandboxId}
    })
  ).filter((entry): entry is {status: ContainerStatus; podSandboxId: string} => Boolean(entry))

  const newest = statuses[0]
  const restartPolicy = parseRestartPolicy(newest.annotations[PodctlAnnotation.restartPolicy] ?? ordered[0].annotations[PodctlAnnotation.restartPolicy])
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

export function parseRestartPolicy(value: string | undefined): RestartPolicy {
  return value === 'Never' || value === 'OnFailure' ? value : 'Always'
}

function toContainerReport(status: ContainerStatus, podSandboxId: string): ContainerReport {
  const state = containerStateName(status.state)
  return {
    name: containerName(status),
    id: status.id,
    podSandboxId,
    state,
    type: status.annotations[PodctlAnnotation.containerType] === 'init' ? 'init' : 'app',
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

function containerStateName(state: ContainerStatus['state']): ContainerStateName {
  switch (state) {
    case 'CONTAINER_CREATED':
      return 'Created'
    case 'CONTAINER_RUNNING':
      return 'Running'
    case 'CONTAINER_EXITED':
      return 'Exited'
    default:
      return 'Unknown'
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
  state: ContainerStateName
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
