/**
 * Sidecars (KEP-753): init containers with restartPolicy Always. SyncPod starts init containers in
 * order, but a sidecar is not waited on to complete: the next init container starts once the
 * sidecar has started (its startupProbe succeeded, if it has one), as the kubelet's
 * computeInitContainerActions does. Sidecars then run beside the app containers and are restarted
 * whenever they exit, whatever the pod's restartPolicy.
 */
import {type ContainerType, type RestartPolicy, sidecarIndexOf} from '../kube/labels.js'
import type {ContainerModel, PodModel} from '../manifest/model.js'
import {killContainer} from './kill.js'
import {isSidecar} from './pod-actions.js'
import type {PodWaitContext} from './pod-wait.js'
import {terminationStages} from './termination-order.js'

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

/**
 * Every app container of a pod whose restartPolicy is Never or OnFailure has terminated for good:
 * the kubelet's computePodActions kills the pod then (KillPod, no sidecar restarted), so sidecars
 * never keep a finished pod alive. They are stopped one after another in reverse order of their
 * declaration (termination-order.ts), each with its preStop hook and grace period. Returns how many.
 */
export async function stopSidecarsOfCompletedPod(ctx: PodWaitContext): Promise<number> {
  if (ctx.pod.restartPolicy === 'Always' || !ctx.pod.initContainers.some(isSidecar)) return 0
  const {containers} = await ctx.client.runtime('listContainers', {filter: {podSandboxId: ctx.sandboxId}}, {signal: ctx.signal})
  const running = containers.filter(
    (container) => container.state === 'CONTAINER_RUNNING' && sidecarIndexOf(container.annotations) !== undefined,
  )
  if (running.length > 0) ctx.step('stopping the sidecars: the app containers have completed')
  for (const stage of terminationStages(running)) {
    await Promise.all(
      stage.map((container) => killContainer(ctx.client, container, {events: ctx.events, pod: ctx.object, signal: ctx.signal})),
    )
  }

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
