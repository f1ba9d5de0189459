/**
 * Sidecars (KEP-753): init containers with restartPolicy Always. SyncPod starts init containers in
 * order, but a sidecar is not waited on to complete: the next init container starts once the
 * sidecar has started (its startupProbe succeeded, if it has one: awaitSidecarStartup, which the
 * reconciler's SyncPod pass waits on), as the kubelet's computeInitContainerActions does. Sidecars
 * then run beside the app containers and are restarted whenever they exit, whatever the pod's
 * restartPolicy.
 */
import type {CriClient} from '../../cri/client.js'
import {type EventSink, warningEvent} from '../../kube/events.js'
import {podFullName} from '../../kube/helpers.js'
import {type ContainerType, type RestartPolicy, sidecarIndexOf} from '../../kube/labels.js'
import type {ContainerModel, PodModel} from '../../manifest/model.js'
import {probesFor} from '../../prober/shared-probes.js'
import {sleep} from '../../util/concurrency.js'
import {containerObject} from './container.js'
import {killContainer, killRunningContainers} from './kill.js'
import {isSidecar} from './pod-actions.js'

export {isSidecar} from './pod-actions.js'

/** A container that must keep running once the pod is initialized, with the policy that restarts it. */
export interface LongRunning {
  container: ContainerModel
  type: ContainerType
  restartPolicy: RestartPolicy
}

/** The pod's sidecars (declaration order), then its app containers: what `--wait running` and `--wait ready` wait for. */
export function longRunningContainers(pod: Pick<PodModel, 'initContainers' | 'containers' | 'restartPolicy'>): LongRunning[] {
  return [
    ...pod.initContainers.filter(isSidecar).map((container) => ({container, type: 'init' as const, restartPolicy: 'Always' as const})),
    ...pod.containers.map((container) => ({container, type: 'app' as const, restartPolicy: pod.restartPolicy})),
  ]
}

export interface SidecarStartup {
  containerId: string
  /** Epoch ms: when the container started (the probe's initialDelaySeconds counts from it). */
  startedAtMs: number
  podSandboxId: string
  podIP?: string
  events: EventSink
  signal?: AbortSignal
  /** Epoch ms: the wait ends here, started or not (the next SyncPod pass looks again). */
  until: number
  pollMs: number
}

/**
 * A running sidecar with a startupProbe has started once the probe succeeds: the next init container
 * waits for that. One whose startup probe fails is killed, as the kubelet kills it, and the next
 * SyncPod pass restarts it with the crash back-off.
 */
export async function awaitSidecarStartup(
  client: CriClient,
  pod: PodModel,
  container: ContainerModel,
  options: SidecarStartup,
): Promise<void> {
  const {containerId, signal} = options
  const object = containerObject(pod, container)
  const probes = probesFor(client).lease({onEvent: (event) => options.events(warningEvent(event.reason, event.message, object))})
  try {
    const {podSandboxId, podIP, startedAtMs} = options
    probes.addContainer({pod, podSandboxId, podIP, containerName: container.name, containerId, startedAtMs})
    while (Date.now() < options.until) {
      if (probes.isStarted(containerId)) return
      if (probes.result(containerId, 'startup') === 'failure') {
        const {containers} = await client.runtime('listContainers', {filter: {id: containerId}}, {signal})
        const owner = podFullName(pod.name, pod.namespace)
        if (containers[0]) await killContainer(client, containers[0], {events: options.events, pod: owner, signal})
        return
      }

      const {containers} = await client.runtime('listContainers', {filter: {id: containerId}}, {signal})
      if (containers[0]?.state !== 'CONTAINER_RUNNING') return
      await sleep(Math.min(options.pollMs, Math.max(1, options.until - Date.now())), signal)
    }
  } finally {
    await probes.stop()
  }
}

/** What stopping a finished pod's sidecars needs of the run watching it. */
export interface SidecarStopContext {
  client: CriClient
  pod: PodModel
  sandboxId: string
  events: EventSink
  signal: AbortSignal
  /** The pod in messages: name_namespace. */
  object: string
  step(text: string): void
}

/**
 * Every app container of a pod whose restartPolicy is Never or OnFailure has terminated for good:
 * the kubelet's computePodActions kills the pod then (KillPod, no sidecar restarted), so sidecars
 * never keep a finished pod alive. They are stopped in reverse order of their declaration within one
 * grace period (termination-order.ts), with their preStop hooks. Returns how many.
 */
export async function stopSidecarsOfCompletedPod(ctx: SidecarStopContext): Promise<number> {
  if (ctx.pod.restartPolicy === 'Always' || !ctx.pod.initContainers.some(isSidecar)) return 0
  const {containers} = await ctx.client.runtime('listContainers', {filter: {podSandboxId: ctx.sandboxId}}, {signal: ctx.signal})
  const running = containers.filter(
    (container) => container.state === 'CONTAINER_RUNNING' && sidecarIndexOf(container.annotations) !== undefined,
  )
  if (running.length > 0) ctx.step('stopping the sidecars: the app containers have completed')
  // One grace period for all of them, in reverse order, as the kubelet's killPod of a finished pod.
  const outcomes = await killRunningContainers(ctx.client, running, {events: ctx.events, pod: ctx.object, signal: ctx.signal})
  const failed = outcomes.find((outcome) => outcome.status === 'rejected')
  if (failed) throw failed.reason

  return running.length
}

/** The --dry-run note on an init container's StartContainer. */
export function initContainerNote(container: ContainerModel): string {
  if (!isSidecar(container)) return 'then ContainerStatus until it exits 0 (restarts per restartPolicy)'
  const started = container.startupProbe ? 'its startupProbe succeeds' : 'it has started'
  return (
    `sidecar (restartPolicy Always): not waited on to complete; the next container starts once ${started}; ` +
    'it keeps running beside the app containers (restarted whenever it exits) and is stopped after them'
  )
}
