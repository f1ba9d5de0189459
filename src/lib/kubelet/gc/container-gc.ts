/**
 * The kubelet's container GC (kuberuntime_gc.go evictContainers), on podctl's containers only: a
 * container the ownership proof (core/ownership.ts) does not make podctl's is never removed, nor
 * grouped with podctl's. podctl's containers that are not running and were created at least MinAge
 * ago are evictable; they are grouped by pod uid and container name as the kubelet groups them
 * (labels first), newest first (attempt, then creation time), and all but the newest
 * MaxPerPodContainer of each group are removed, with their log file, rotated logs and
 * /var/log/containers link. A container in an unknown state is stopped first, as the kubelet kills it.
 */
import {isAbsolute} from 'node:path'

import type {CriClient} from '../../cri/client.js'
import {NotFoundError} from '../../errors.js'
import type {Container} from '../../../generated/runtime/v1/api.js'
import {podFullName} from '../../kube/helpers.js'
import {containerName, PodLabel} from '../../kube/labels.js'
import {compareNanosDesc} from '../../util/time.js'
import {containerOwnership, type Ownership} from '../../kube/ownership.js'
import {removeContainerLogLinks} from '../kuberuntime/container-logs-links.js'
import {removeLogFiles} from '../kuberuntime/container-ops.js'
import type {ContainerGcPolicy} from './policy.js'
import {type GcRound, inRoundNamespace, removeDecided} from './round.js'

export interface CollectedContainer {
  id: string
  /** The container's name (metadata, as the kubelet groups by it). */
  name: string
  attempt: number
  state: string
  /** name_namespace from the labels; '' for a container without kubelet labels. */
  pod: string
  podUid: string
  podSandboxId: string
  /** The log file that went with it (ContainerStatus.logPath), when the runtime named one. */
  logPath?: string
}

/** The evict unit: pod uid and container name, read from the labels as the kubelet reads them. */
function unitKey(container: Container): string {
  return `${container.labels[PodLabel.uid] ?? ''}\u0000${containerName(container)}`
}

/** Newest first: higher attempt, then later creation (the kubelet's byAttempt). */
export function byAttemptNewestFirst(a: Container, b: Container): number {
  const attempts = (b.metadata?.attempt ?? 0) - (a.metadata?.attempt ?? 0)
  return attempts || compareNanosDesc(a.createdAt, b.createdAt) || a.id.localeCompare(b.id)
}

/** Not running and created at least minAge before `nowMs`. */
export function isEvictable(container: Container, policy: Pick<ContainerGcPolicy, 'minAgeMs'>, nowMs: number): boolean {
  if (container.state === 'CONTAINER_RUNNING') return false
  const createdMs = Number(BigInt(container.createdAt || '0') / 1_000_000n)
  return createdMs <= nowMs - policy.minAgeMs
}

/** Of podctl's containers, those the policy removes, oldest of each unit last; the rest of each unit is kept. */
export function containersToRemove(containers: readonly Container[], policy: ContainerGcPolicy, nowMs: number): Container[] {
  if (policy.maxPerPodContainer < 0) return []
  const units = new Map<string, Container[]>()
  for (const container of containers) {
    if (!isEvictable(container, policy, nowMs)) continue
    const key = unitKey(container)
    units.set(key, [...(units.get(key) ?? []), container])
  }

  return [...units.values()].flatMap((unit) => [...unit].sort(byAttemptNewestFirst).slice(policy.maxPerPodContainer))
}

export function describeContainer(container: Container, logPath?: string): CollectedContainer {
  const {labels} = container
  const pod = labels[PodLabel.name] && labels[PodLabel.namespace] ? podFullName(labels[PodLabel.name], labels[PodLabel.namespace]) : ''
  return {
    id: container.id,
    name: container.metadata?.name ?? '',
    attempt: container.metadata?.attempt ?? 0,
    state: container.state,
    pod,
    podUid: labels[PodLabel.uid] ?? '',
    podSandboxId: container.podSandboxId,
    ...(logPath ? {logPath} : {}),
  }
}

/** ContainerStatus.logPath, read before the container goes (the runtime forgets it with the container). */
export async function containerLogPath(client: CriClient, containerId: string, signal?: AbortSignal): Promise<string | undefined> {
  const response = await client.runtime('containerStatus', {containerId}, {signal}).catch(() => undefined)
  const path = response?.status?.logPath
  return path && isAbsolute(path) ? path : undefined
}

/**
 * Removes one container the kubelet's way (removeContainer): stopped first when its state is
 * unknown, then RemoveContainer, then its log file (`logPath`, read before: the runtime forgets it
 * with the container) with its rotations (<log>.<timestamp>) and its /var/log/containers link. A
 * container already gone counts as removed.
 */
/**
 * containerd's answer to a RemoveContainer that meets another in flight for the same container: SyncPod
 * prunes a restarted container's older dead instances (sync-pod.ts pruneOlder) while a round may be
 * collecting the same one. The other removal finishes it; if it fails, the container is still dead
 * and the next round collects it.
 */
function removalInFlight(error: unknown): boolean {
  return error instanceof Error && /already in removing state/.test(error.message)
}

export async function removeDeadContainer(
  client: CriClient,
  container: Container,
  logPath: string | undefined,
  signal?: AbortSignal,
): Promise<CollectedContainer> {
  const ignoreGone = (error: unknown) => {
    if (!(error instanceof NotFoundError) && !removalInFlight(error)) throw error
  }

  if (container.state === 'CONTAINER_UNKNOWN')
    await client.runtime('stopContainer', {containerId: container.id, timeout: '0'}, {signal}).catch(ignoreGone)
  // The kubelet's order (removeContainer): the log first. A log that cannot be removed keeps its container for the
  // next round, and a container gone from the runtime's list never leaves its log behind.
  if (logPath) await removeLogFiles(logPath)
  await client.runtime('removeContainer', {containerId: container.id}, {signal}).catch(ignoreGone)
  await removeContainerLogLinks([container])
  return describeContainer(container, logPath)
}

/** podctl's containers in the round's scope; the dead ones of other tools are counted as left alone. */
function ownedContainers(round: GcRound, listed: readonly Container[]): Map<Container, Ownership> {
  const owned = new Map<Container, Ownership>()
  for (const container of listed.filter(inRoundNamespace(round))) {
    const owner = containerOwnership(container, round.records)
    if (owner.ours) owned.set(container, owner)
    else if (container.state !== 'CONTAINER_RUNNING') round.explanation.leftAlone('container', owner.why)
  }

  return owned
}

/** The dead containers the policy removes, removed (or, on a dry run, described): the round's container step. */
export async function collectContainers(
  round: GcRound,
  listed: readonly Container[],
  policy: ContainerGcPolicy,
): Promise<CollectedContainer[]> {
  const owned = ownedContainers(round, listed)
  const kept = policy.maxPerPodContainer === 1 ? 'the newest dead one stays' : `the newest ${policy.maxPerPodContainer} dead ones stay`
  const collected: CollectedContainer[] = []
  for (const container of containersToRemove([...owned.keys()], policy, round.nowMs)) {
    const {pod, name} = describeContainer(container)
    const why = `${owned.get(container)!.why}; an older dead instance of ${name}${pod ? ` in pod ${pod}` : ''} (${kept})`
    const logPath = await containerLogPath(round.client, container.id, round.signal)
    const decided = {kind: 'container' as const, object: container.id, why, failureName: `container ${container.id}`}
    if (await removeDecided(round, decided, () => removeDeadContainer(round.client, container, logPath, round.signal)))
      collected.push(describeContainer(container, logPath))
  }

  return collected
}
