/**
 * One pod's status the kubelet's way (kuberuntime_manager.go GetPodStatus), from the runtime alone:
 * the container type and restart policy come from podctl's annotations, with the Kubernetes
 * defaults when absent, and the phase from getPhase (pod-phase.ts).
 */
import type {CriClient} from '../../cri/client.js'
import {NotFoundError} from '../../errors.js'
import type {ContainerStatus, PodSandbox, PodSandboxStatus} from '../../../generated/runtime/v1/api.js'
import {type KubeContainerState, newestFirst, podFullName, sandboxIps, toKubeContainerState} from '../../kube/helpers.js'
import {
  containerName,
  type ContainerType,
  containerTypeOf,
  podUidOf,
  type RestartPolicy,
  restartPolicyOf,
  sidecarIndexOf,
} from '../../kube/labels.js'
import {mapLimit, RUNTIME_CALLS_IN_FLIGHT} from '../../util/concurrency.js'
import {epochNanos, nanosToIso} from '../../util/time.js'
import {computePhase, isPodReady, type PhaseInput, type PodPhase} from './pod-phase.js'

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
  // One sandbox: the runtime lists its containers alone (a container outlives no sandbox: removing
  // a sandbox removes its containers), instead of every container on the node.
  const containerFilter = ordered.length === 1 ? {podSandboxId: ordered[0].id} : {}
  const [sandboxStatuses, {containers: listed}] = await Promise.all([
    mapLimit(ordered, RUNTIME_CALLS_IN_FLIGHT, (sandbox) =>
      skipNotFound(client.runtime('podSandboxStatus', {podSandboxId: sandbox.id, verbose: false}).then((r) => r.status)),
    ),
    client.runtime('listContainers', {filter: containerFilter}),
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
  const sidecars = new Set(
    containerStatuses.filter(({status}) => sidecarIndexOf(status.annotations) !== undefined).map(({status}) => status.id),
  )
  const phaseInput: PhaseInput = {
    restartPolicy,
    sandboxReady: newest.state === 'SANDBOX_READY',
    containers: containers.map(({id, name, type, state, exitCode}) => ({name, type, state, exitCode, sidecar: sidecars.has(id)})),
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
      // CRI-O 1.26 sends a sandbox's created_at in seconds (util/time.ts epochNanos).
      createdAt: nanosToIso(epochNanos(status.createdAt)),
      ip: status.network?.ip || null,
    })),
    containers,
  }
}

export function toContainerReport(status: ContainerStatus, podSandboxId: string): ContainerReport {
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

/** The answer, or undefined when the object is gone (NotFound). */
export async function skipNotFound<T>(call: Promise<T>): Promise<T | undefined> {
  try {
    return await call
  } catch (error) {
    if (error instanceof NotFoundError) return undefined
    throw error
  }
}
