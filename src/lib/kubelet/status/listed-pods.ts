/**
 * Every pod's status from one listing of the node (ListPodSandbox and ListContainers), computed by
 * the same pure functions `status POD` uses (getPhase, convertToAPIContainerStatuses, the pod
 * conditions), for a view that shows hundreds of pods at once and may not ask the runtime once per
 * pod. What a listing lacks comes from two caches the caller keeps by ID, each filled once per
 * object since it never changes afterwards: a ready sandbox's IP (PodSandboxStatus) and an exited
 * container's end (ContainerStatus: exit code, reason, times). The pod's records (pod.json, its crash
 * back-off, the supervisor's readiness, a recorded termination) come from its pod directory.
 */
import {stat} from 'node:fs/promises'

import type {Container, ContainerStatus, PodSandbox} from '../../../generated/runtime/v1/api.js'
import {CRASH_BACKOFF_INITIAL_MS, CRASH_BACKOFF_MAX_MS, ladderFromEnv} from '../../kube/backoff.js'
import {newestFirst, podFullName, toKubeContainerState} from '../../kube/helpers.js'
import {containerName, containerTypeOf, podUidOf, type RestartPolicy, restartPolicyOf, sidecarIndexOf} from '../../kube/labels.js'
import {nanosToIso} from '../../util/time.js'
import type {PodModel} from '../../manifest/model.js'
import {type BackOffEntries, readBackOff, readDesiredPod, readRecordedStatus, type RecordedPodStatus} from '../config/desired-state.js'
import {supervisorOf} from '../config/supervisor-lock.js'
import {readTermination, type TerminationIntent} from '../config/termination-record.js'
import {podDirectory} from '../core/pod-directory.js'
import {type ConditionType, containerStatusOf, type ContainerStatusView, podConditionsOf} from './container-status.js'
import {computePhase, isPodReady, type PodPhase} from './pod-phase.js'
import {type ContainerReport, toContainerReport} from './pod-status.js'
import {statusSpecs, supervisorAlive} from './status-manager.js'

/** What a pod's directory says of it; absent for a pod podctl did not run. */
export interface PodRecords {
  pod?: PodModel
  backOff: BackOffEntries
  recorded?: RecordedPodStatus
  terminating?: TerminationIntent
  /** The live process that holds the pod's supervisor lock. */
  supervisor?: {pid: number; since: string; holder: string}
}

/** A pod's records, or undefined when it has no pod directory under `podDirRoot`. */
export async function readPodRecords(podDirRoot: string, uid: string): Promise<PodRecords | undefined> {
  if (uid === '' || !(await stat(podDirectory(podDirRoot, uid)).catch(() => undefined))) return undefined
  const [pod, backOff, recorded, holder] = await Promise.all([
    readDesiredPod(podDirRoot, uid).catch(() => undefined),
    readBackOff(podDirRoot, uid).catch(() => ({})),
    readRecordedStatus(podDirRoot, uid).catch(() => undefined),
    supervisorOf(podDirRoot, uid).catch(() => undefined),
  ])
  const supervisor = holder && {pid: holder.pid, since: holder.since, holder: holder.holder}
  return {pod, backOff, recorded, terminating: readTermination(podDirRoot, uid), supervisor}
}

/** One listing of the node, with the details the caller has cached by ID. */
export interface NodeListing {
  sandboxes: readonly PodSandbox[]
  containers: readonly Container[]
  /** Sandbox ID → its IP (ready sandboxes). */
  sandboxIps: ReadonlyMap<string, string>
  /** Container ID → its ContainerStatus, for exited containers. */
  exited: ReadonlyMap<string, ContainerStatus>
}

export interface ListedSandbox {
  id: string
  attempt: number
  ready: boolean
  createdAt: string
}

export interface ListedPodStatus {
  name: string
  namespace: string
  uid: string
  fullName: string
  phase: PodPhase
  /** The kubelet's ready condition of the pod. */
  ready: boolean
  ip: string | null
  restartPolicy: RestartPolicy
  /** Every attempt, newest first. */
  sandboxes: ListedSandbox[]
  /** Every instance of every container, newest first. */
  instances: ContainerReport[]
  /** One per container of the spec (the recorded pod's, else the names the runtime holds). */
  statuses: ContainerStatusView[]
  conditions: Array<{type: ConditionType; status: boolean}>
  /** Its termination is recorded (a kill is under way or left to finish). */
  terminating: boolean
  /** Whether a live supervisor restarts and probes it, and which. */
  supervisor: {pid: number; since: string; holder: string} | null
  supervised: boolean
}

/** A container as getPodStatus reports it, from the listing (and, once it exited, its cached status). */
export function listedContainerReport(container: Container, exited: ContainerStatus | undefined): ContainerReport {
  if (exited) return toContainerReport(exited, container.podSandboxId)
  const state = toKubeContainerState(container.state)
  return {
    name: containerName(container),
    id: container.id,
    podSandboxId: container.podSandboxId,
    state,
    type: containerTypeOf(container.annotations),
    image: container.image?.userSpecifiedImage || container.image?.image || '',
    imageRef: container.imageRef || container.imageId,
    attempt: container.metadata?.attempt ?? 0,
    createdAt: nanosToIso(container.createdAt),
    startedAt: null,
    finishedAt: null,
    exitCode: null,
    reason: '',
    message: '',
  }
}

/** The sandboxes of each pod (all attempts), by the pod's UID, or the sandbox ID for pods made without one. */
export function groupPods(sandboxes: readonly PodSandbox[]): Map<string, PodSandbox[]> {
  const pods = new Map<string, PodSandbox[]>()
  for (const sandbox of sandboxes) {
    const key = sandbox.metadata?.uid || sandbox.id
    const group = pods.get(key)
    if (group) group.push(sandbox)
    else pods.set(key, [sandbox])
  }

  for (const group of pods.values()) group.sort(newestFirst)
  return pods
}

/** Every pod's status; `records` by pod UID (readPodRecords). */
export function listedPodStatuses(listing: NodeListing, records: ReadonlyMap<string, PodRecords>, now = Date.now()): ListedPodStatus[] {
  const byPod = new Map<string, Container[]>()
  const podOfSandbox = new Map<string, string>()
  const pods = groupPods(listing.sandboxes)
  for (const [key, group] of pods) for (const sandbox of group) podOfSandbox.set(sandbox.id, key)
  for (const container of listing.containers) {
    // The kubelet selects a pod's containers by the io.kubernetes.pod.uid label; crictl's by sandbox ID.
    const uid = podUidOf(container.labels)
    const key = uid && pods.has(uid) ? uid : podOfSandbox.get(container.podSandboxId)
    if (key === undefined) continue
    const list = byPod.get(key)
    if (list) list.push(container)
    else byPod.set(key, [container])
  }

  return [...pods].map(([key, sandboxes]) => podStatusOf(sandboxes, byPod.get(key) ?? [], listing, records.get(key), now))
}

function podStatusOf(
  sandboxes: PodSandbox[],
  containers: Container[],
  listing: NodeListing,
  records: PodRecords | undefined,
  now: number,
): ListedPodStatus {
  const newest = sandboxes[0]
  const name = newest.metadata?.name ?? ''
  const namespace = newest.metadata?.namespace ?? ''
  const uid = newest.metadata?.uid ?? ''
  const sandboxReady = newest.state === 'SANDBOX_READY'
  const instances = [...containers].sort(newestFirst).map((container) => listedContainerReport(container, listing.exited.get(container.id)))
  const restartPolicy = restartPolicyOf(newest.annotations)
  const sidecars = new Set(containers.filter((c) => sidecarIndexOf(c.annotations) !== undefined).map((c) => c.id))
  const phaseInput = {
    restartPolicy,
    sandboxReady,
    containers: instances.map(({id, name, type, state, exitCode}) => ({name, type, state, exitCode, sidecar: sidecars.has(id)})),
  }
  const phase = computePhase(phaseInput)
  const supervisor = records?.supervisor ?? null
  const supervised = supervisor !== null || supervisorAlive(records?.recorded?.supervisor?.pid)
  const specs = statusSpecs(records?.pod, {containers: instances, uid})
  const input = {
    pod: {name, namespace, uid},
    restartPolicy,
    specs,
    instances,
    newestSandbox: {id: newest.id, ready: sandboxReady},
    recorded: supervised ? records?.recorded?.containers : undefined,
    backOff: {entries: records?.backOff ?? {}, ladder: ladderFromEnv(CRASH_BACKOFF_INITIAL_MS, CRASH_BACKOFF_MAX_MS)},
    now,
  }
  const statuses = specs.map((spec) => containerStatusOf(spec, input))
  const conditions = podConditionsOf(statuses, sandboxReady)
  const ip = sandboxReady ? (listing.sandboxIps.get(newest.id) ?? null) : null
  return {
    name,
    namespace,
    uid,
    fullName: podFullName(name, namespace),
    phase,
    // The Ready condition where a supervisor's prober or the spec says more than the runtime does.
    ready: isPodReady(phase, phaseInput) && conditions.some((c) => c.type === 'Ready' && c.status),
    ip,
    restartPolicy,
    sandboxes: sandboxes.map((sandbox) => ({
      id: sandbox.id,
      attempt: sandbox.metadata?.attempt ?? 0,
      ready: sandbox.state === 'SANDBOX_READY',
      createdAt: sandbox.createdAt,
    })),
    instances,
    statuses,
    conditions,
    terminating: records?.terminating !== undefined,
    supervisor,
    supervised,
  }
}
