/**
 * The kubelet's container GC (kuberuntime_gc.go evictContainers): every container the runtime lists
 * (labels or not) that is not running and was created at least MinAge ago is evictable; they are
 * grouped by pod UID label and container name, newest first (attempt, then creation time), and all
 * but the newest MaxPerPodContainer of each group are removed, with their log file, rotated logs and
 * /var/log/containers link. A container in an unknown state is stopped first, as the kubelet kills it.
 */
import {isAbsolute} from 'node:path'

import type {CriClient} from '../../cri/client.js'
import {NotFoundError} from '../../errors.js'
import type {Container} from '../../../generated/runtime/v1/api.js'
import {podFullName} from '../../kube/helpers.js'
import {PodLabel} from '../../kube/labels.js'
import {compareNanosDesc} from '../../util/time.js'
import {removeContainerLogLinks} from '../kuberuntime/container-logs-links.js'
import {removeLogFiles} from '../kuberuntime/container-ops.js'
import type {ContainerGcPolicy} from './policy.js'

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

/** The evict unit: pod UID and container name (a container without labels has UID ""). */
function unitKey(container: Container): string {
  return `${container.labels[PodLabel.uid] ?? ''}\u0000${container.metadata?.name ?? ''}`
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

/** The containers the policy removes, oldest of each unit last; the rest of each unit is kept. */
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
 * unknown, then RemoveContainer, then its log file with its rotations (<log>.<timestamp>) and its
 * /var/log/containers link. A container already gone counts as removed.
 */
export async function removeDeadContainer(client: CriClient, container: Container, signal?: AbortSignal): Promise<CollectedContainer> {
  const logPath = await containerLogPath(client, container.id, signal)
  const ignoreGone = (error: unknown) => {
    if (!(error instanceof NotFoundError)) throw error
  }

  if (container.state === 'CONTAINER_UNKNOWN')
    await client.runtime('stopContainer', {containerId: container.id, timeout: '0'}, {signal}).catch(ignoreGone)
  await client.runtime('removeContainer', {containerId: container.id}, {signal}).catch(ignoreGone)
  if (logPath) await removeLogFiles(logPath).catch(() => [])
  await removeContainerLogLinks([container])
  return describeContainer(container, logPath)
}
