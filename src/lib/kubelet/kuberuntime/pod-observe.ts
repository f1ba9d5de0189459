/**
 * What runs, for the reconciler: the kubelet's GetPodStatus reduced to what computePodActions
 * reads (pod-actions.ts) — each sandbox's readiness, attempt and IP, each container instance's
 * state, restart count, hash and exit — from one ListContainers and the status calls it needs.
 */
import type {CriClient} from '../../cri/client.js'
import {NotFoundError} from '../../errors.js'
import type {Container, ContainerStatus, PodSandbox} from '../../../generated/runtime/v1/api.js'
import {newestFirst, toKubeContainerState} from '../../kube/helpers.js'
import {ContainerAnnotation, containerName, containerTypeOf, podUidOf} from '../../kube/labels.js'
import {mapLimit, RUNTIME_CALLS_IN_FLIGHT} from '../../util/concurrency.js'
import {nanosToMs} from '../../util/time.js'
import type {ObservedContainer, ObservedPod, ObservedSandbox} from './pod-actions.js'

export interface ObserveOptions {
  /** A ListContainers result to reuse (sync of many pods lists once). */
  containers?: readonly Container[]
  signal?: AbortSignal
}

async function orUndefined<T>(call: Promise<T>): Promise<T | undefined> {
  try {
    return await call
  } catch (error) {
    if (error instanceof NotFoundError) return undefined
    throw error
  }
}

function msOrNull(nanos: string | undefined): number | null {
  return nanos && nanos !== '0' ? nanosToMs(nanos) : null
}

/** The pod's sandboxes (every attempt) and containers as computePodActions reads them. */
export async function observePod(client: CriClient, sandboxes: readonly PodSandbox[], options: ObserveOptions = {}): Promise<ObservedPod> {
  const ordered = [...sandboxes].sort(newestFirst)
  const ids = new Set(ordered.map((sandbox) => sandbox.id))
  const uids = new Set(ordered.map((sandbox) => sandbox.metadata?.uid).filter(Boolean))
  const listed = options.containers ?? (await client.runtime('listContainers', {filter: {}}, {signal: options.signal})).containers
  const ofPod = listed
    .filter((container) => ids.has(container.podSandboxId) || (podUidOf(container.labels) !== '' && uids.has(podUidOf(container.labels))))
    .sort(newestFirst)
  const observedSandboxes = await mapLimit(ordered, RUNTIME_CALLS_IN_FLIGHT, async (sandbox): Promise<ObservedSandbox | undefined> => {
    const ready = sandbox.state === 'SANDBOX_READY'
    // Only a ready sandbox needs its IP checked (PodSandboxChanged).
    const status = ready
      ? await orUndefined(client.runtime('podSandboxStatus', {podSandboxId: sandbox.id, verbose: false}, {signal: options.signal}))
      : undefined
    // Listed ready but unknown now: the runtime lost it since the listing. A lost sandbox is not a changed one
    // (SandboxChanged would kill it): the caller sees the pod without it (SandboxMissing when none is left).
    if (ready && status === undefined) return undefined
    return {
      id: sandbox.id,
      attempt: sandbox.metadata?.attempt ?? 0,
      ready,
      hasIp: Boolean(status?.status?.network?.ip),
      ip: status?.status?.network?.ip || undefined,
      createdAtMs: nanosToMs(sandbox.createdAt),
    }
  })
  const containers = await mapLimit(ofPod, RUNTIME_CALLS_IN_FLIGHT, (container) => observeContainer(client, container, options.signal))
  return {
    sandboxes: observedSandboxes.filter((sandbox): sandbox is ObservedSandbox => sandbox !== undefined),
    containers: containers.filter((container): container is ObservedContainer => Boolean(container)),
  }
}

/** A running container needs no status call; an exited one does (exit code, finish time). */
async function observeContainer(client: CriClient, container: Container, signal?: AbortSignal): Promise<ObservedContainer | undefined> {
  const base = {
    id: container.id,
    name: containerName(container),
    type: containerTypeOf(container.annotations),
    podSandboxId: container.podSandboxId,
    state: toKubeContainerState(container.state),
    attempt: container.metadata?.attempt ?? 0,
    hash: container.annotations[ContainerAnnotation.hash] ?? '',
    exitCode: null,
    reason: '',
    startedAtMs: null,
    finishedAtMs: null,
  }
  if (container.state === 'CONTAINER_RUNNING') return {...base, startedAtMs: msOrNull(container.createdAt)}
  const response = await orUndefined(client.runtime('containerStatus', {containerId: container.id, verbose: false}, {signal}))
  if (!response?.status) return undefined
  return withStatus(base, response.status)
}

function withStatus(base: ObservedContainer, status: ContainerStatus): ObservedContainer {
  const state = toKubeContainerState(status.state)
  return {
    ...base,
    state,
    exitCode: state === 'Exited' ? status.exitCode : null,
    reason: status.reason,
    startedAtMs: msOrNull(status.startedAt),
    finishedAtMs: state === 'Exited' ? msOrNull(status.finishedAt) : null,
  }
}
