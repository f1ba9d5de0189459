/**
 * In-place resize of a running pod's container resources (KEP-1287, GA in Kubernetes 1.35: the
 * `resize` subresource and the kubelet's handling of it): new cpu and memory requests and limits for
 * one container of a pod podctl runs. As the API server, a resize may not change the pod's QoS class
 * and applies to app containers and sidecars only. As the kubelet, a resource whose resizePolicy is
 * NotRequired (the default) is changed in the running container's cgroup (UpdateContainerResources);
 * one with RestartContainer stops the container, which starts again with the new resources at the
 * pod's next sync. The new resources are recorded beside the pod (`resized.json` in its directory):
 * every later start of the container uses them, while the container's hash stays that of its spec,
 * so the change never reads as a new spec (which would recreate the container).
 */
import {readFileSync, writeFileSync} from 'node:fs'
import {dirname} from 'node:path'

import type {CriClient} from '../../cri/client.js'
import {runtimeLabel} from '../../cri/newer-rpcs.js'
import {NotFoundError, UnimplementedError, UsageError} from '../../errors.js'
import type {Container, PodSandbox} from '../../../generated/runtime/v1/api.js'
import {podFullName} from '../../kube/helpers.js'
import {ContainerLabel, gracePeriodFor, podDirectoryOf, PodLabel} from '../../kube/labels.js'
import {FieldReader, type Json} from '../../manifest/fields.js'
import type {ContainerModel, PodModel, ResourceListModel} from '../../manifest/model.js'
import {readResources} from '../../manifest/pod-spec.js'
import {readDesiredPod} from '../config/desired-state.js'
import {effectiveResources, linuxResources, podQosClass} from '../core/resources.js'

type Resources = ContainerModel['resources']
const RESIZED_FILE = 'resized.json'

export interface ResizeRequest {
  name: string
  namespace: string
  /** The container; the pod's only app container when left out. */
  container?: string
  /** cpu and memory quantities as given ("500m", "128Mi"). */
  requests: ResourceListModel
  limits: ResourceListModel
}

export interface ResizeOutcome {
  /** name_namespace */
  pod: string
  container: string
  before: Resources
  after: Resources
  /** What was done: the running container's cgroup changed, the container stopped to restart, or only recorded (not running). */
  action: 'updated' | 'restarting' | 'recorded'
  containerId?: string
}

/** The resources recorded for the pod's containers by earlier resizes (container name → resources). */
export function resizedResources(podDirectory: string | undefined): Record<string, Resources> {
  if (!podDirectory) return {}
  try {
    return JSON.parse(readFileSync(`${podDirectory}/${RESIZED_FILE}`, 'utf8')) as Record<string, Resources>
  } catch {
    return {}
  }
}

function recordResize(podDirectory: string, container: string, resources: Resources): void {
  const all = {...resizedResources(podDirectory), [container]: resources}
  writeFileSync(`${podDirectory}/${RESIZED_FILE}`, `${JSON.stringify(all)}\n`, {mode: 0o644})
}

/** The pod's newest ready sandbox, its directory and its record. */
async function resizablePod(client: CriClient, request: ResizeRequest): Promise<{sandbox: PodSandbox; directory: string; pod: PodModel}> {
  const full = podFullName(request.name, request.namespace)
  const selector = {[PodLabel.name]: request.name, [PodLabel.namespace]: request.namespace}
  const {items} = await client.runtime('listPodSandbox', {filter: {labelSelector: selector, state: {state: 'SANDBOX_READY' as never}}})
  // Filtered again here: the runtime's filter is a saving, not a promise.
  const ready = items.filter((item) => item.state === 'SANDBOX_READY')
  const sandbox = ready.sort((a, b) => (BigInt(b.createdAt) > BigInt(a.createdAt) ? 1 : -1))[0]
  if (!sandbox)
    throw new NotFoundError(`pod "${request.name}" is not running in namespace "${request.namespace}"; list pods with: podctl pods`)
  const directory = podDirectoryOf(sandbox.annotations)
  const pod = directory && (await readDesiredPod(dirname(directory), sandbox.metadata?.uid ?? '', client.runtimeEndpoint))
  if (!directory || !pod) {
    throw new NotFoundError(
      `pod ${full} has no record of podctl run; resize changes pods podctl runs (podctl update changes one container's limits)`,
    )
  }

  return {sandbox, directory, pod}
}

/** The container to resize: named, or the only app container; never an init container that runs to completion. */
function resizableContainer(pod: PodModel, name: string | undefined): ContainerModel {
  const full = podFullName(pod.name, pod.namespace)
  const sidecars = pod.initContainers.filter((container) => container.restartPolicy === 'Always')
  const candidates = [...pod.containers, ...sidecars]
  if (name === undefined) {
    if (pod.containers.length === 1) return pod.containers[0]
    throw new UsageError(
      `pod ${full} has ${candidates.length} containers (${candidates.map((c) => c.name).join(', ')}); pick one with --container`,
    )
  }

  const found = candidates.find((container) => container.name === name)
  if (found) return found
  if (pod.initContainers.some((container) => container.name === name))
    throw new UsageError(`container ${name} of pod ${full} is an init container: only app containers and sidecars can be resized`)
  throw new NotFoundError(`pod ${full} has no container "${name}"; it has: ${candidates.map((c) => c.name).join(', ')}`)
}

/** The new resources, checked as the API server checks a container's (quantities, requests ≤ limits). */
function newResources(current: Resources, request: ResizeRequest): Resources {
  const r = new FieldReader('resize')
  const document = {requests: {...current.requests, ...request.requests}, limits: {...current.limits, ...request.limits}} as Json
  return readResources(r, document, 'resources')
}

function changedResources(before: Resources, after: Resources): Array<'cpu' | 'memory'> {
  const a = effectiveResources({resources: before} as ContainerModel)
  const b = effectiveResources({resources: after} as ContainerModel)
  return [
    ...(a.cpuRequestMilli !== b.cpuRequestMilli || a.cpuLimitMilli !== b.cpuLimitMilli ? (['cpu'] as const) : []),
    ...(a.memoryRequestBytes !== b.memoryRequestBytes || a.memoryLimitBytes !== b.memoryLimitBytes ? (['memory'] as const) : []),
  ]
}

/** The container's running instance in the sandbox, if any. */
async function runningInstance(client: CriClient, sandbox: PodSandbox, name: string): Promise<Container | undefined> {
  const {containers} = await client.runtime('listContainers', {
    filter: {podSandboxId: sandbox.id, labelSelector: {[ContainerLabel.name]: name}, state: {state: 'CONTAINER_RUNNING' as never}},
  })
  return containers.find((container) => container.state === 'CONTAINER_RUNNING' && container.podSandboxId === sandbox.id)
}

export async function resizePod(client: CriClient, request: ResizeRequest): Promise<ResizeOutcome> {
  const {sandbox, directory, pod} = await resizablePod(client, request)
  const container = resizableContainer(pod, request.container)
  const full = podFullName(pod.name, pod.namespace)
  const resized = resizedResources(directory)
  const before = resized[container.name] ?? container.resources
  const after = newResources(before, request)
  const changed = changedResources(before, after)
  if (changed.length === 0)
    throw new UsageError(`container ${container.name} of pod ${full} already has these resources; nothing to resize`)
  // The pod as it runs now (earlier resizes of other containers included), with this container's resources.
  const withResources = (c: ContainerModel, resources: Resources) =>
    c.name === container.name ? {...c, resources} : {...c, resources: resized[c.name] ?? c.resources}
  const resizedPod = (resources: Resources) => ({
    ...pod,
    containers: pod.containers.map((c) => withResources(c, resources)),
    initContainers: pod.initContainers.map((c) => withResources(c, resources)),
  })
  const [qosBefore, qosAfter] = [podQosClass(resizedPod(before)), podQosClass(resizedPod(after))]
  if (qosBefore !== qosAfter) {
    throw new UsageError(
      `resizing ${container.name} would change pod ${full}'s QoS class from ${qosBefore} to ${qosAfter}, which Kubernetes does not allow`,
    )
  }

  const outcome = {pod: full, container: container.name, before, after}
  const instance = await runningInstance(client, sandbox, container.name)
  const restart = changed.some(
    (resource) => container.resizePolicy?.find((policy) => policy.resourceName === resource)?.restartPolicy === 'RestartContainer',
  )
  if (!instance) {
    recordResize(directory, container.name, after)
    return {...outcome, action: 'recorded'}
  }

  if (restart) {
    recordResize(directory, container.name, after)
    // The kubelet kills it for the restart as for any other, within the pod's grace period.
    await client.runtime('stopContainer', {containerId: instance.id, timeout: String(gracePeriodFor(instance.annotations))})
    return {...outcome, action: 'restarting', containerId: instance.id}
  }

  await updateRunning(client, instance, after)
  recordResize(directory, container.name, after)
  return {...outcome, action: 'updated', containerId: instance.id}
}

/** UpdateContainerResources with the kubelet's cgroup numbers for the new resources, keeping the OOM score the container has. */
async function updateRunning(client: CriClient, instance: Container, resources: Resources): Promise<void> {
  const {status} = await client.runtime('containerStatus', {containerId: instance.id, verbose: false})
  const effective = effectiveResources({resources} as ContainerModel)
  const linux = {
    ...linuxResources(effective.cpuRequestMilli, effective.cpuLimitMilli, effective.memoryLimitBytes),
    oomScoreAdj: status?.resources?.linux?.oomScoreAdj ?? '0',
  }
  try {
    await client.runtime('updateContainerResources', {containerId: instance.id, linux})
  } catch (error) {
    if (!(error instanceof UnimplementedError)) throw error
    throw new UnimplementedError(`${await runtimeLabel(client)} cannot change a running container's resources (UpdateContainerResources)`)
  }
}
