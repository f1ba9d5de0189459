/**
 * `run --wait ready`: every app container running and ready by its readiness probe (started, if it
 * has none), with the probes run in-process by a ProbeManager as the kubelet's workers would run
 * them. Containers that exit meanwhile are restarted per restartPolicy (the --wait running wait).
 * When --timeout runs out, the error says which containers are not ready and why: the pod
 * condition's reason (ContainersNotReady) and each probe's last output and exit code.
 */
import {DeadlineExceededError, formatMs} from '../errors.js'
import type {ContainerModel, PodModel} from '../manifest/model.js'
import {type ProbeKind, ProbeManager} from '../prober/manager.js'
import {warningEvent} from '../kube/events.js'
import {podFullName} from '../kube/helpers.js'
import {nanosToMs} from '../util/time.js'
import {containerObject} from './container.js'
import {containerStatus, type PodWaitContext, sleepWithin, throwIfInterrupted, waitRunning} from './pod-wait.js'
import {PodFailedError} from './reasons.js'
import {longRunningContainers} from './sidecars.js'

/** The host probes reach the pod at: its IP, or loopback for a host-network pod (it listens on the node). */
export function probeHost(pod: Pick<PodModel, 'hostNetwork'>, ips: readonly string[]): string | undefined {
  return ips[0] ?? (pod.hostNetwork ? '127.0.0.1' : undefined)
}

export async function waitReady(ctx: PodWaitContext, podIP: string | undefined): Promise<void> {
  const started = Date.now()
  const probes = new ProbeManager({
    client: ctx.client,
    onEvent(event) {
      const container = [...ctx.pod.containers, ...ctx.pod.initContainers].find((candidate) => candidate.name === event.containerName)
      ctx.events(warningEvent(event.reason, event.message, container ? containerObject(ctx.pod, container) : ctx.object))
    },
  })
  const probed = new Map<string, string>()
  try {
    for (;;) {
      throwIfInterrupted(ctx.signal, ctx.object)
      try {
        // Every app container running (exited ones restarted per restartPolicy), then probed.
        await waitRunning(ctx)
        await followContainers(ctx, probes, probed, podIP)
        const unready = watched(ctx).filter((container) => probes.result(probed.get(container.name)!, 'readiness') !== 'success')
        if (unready.length === 0) return
        ctx.step(`waiting for ${unready.map((container) => container.name).join(', ')} to be ready`)
        await sleepWithin(ctx, ctx.pollMs, 'readiness')
      } catch (error) {
        // --timeout ran out, in the wait or in a runtime call it bounded: say why the pod is not ready.
        // (The client's own deadline for the command may end a little before the run's.)
        const slackMs = Math.max(ctx.pollMs, 2000)
        if (!(error instanceof DeadlineExceededError) || ctx.deadline === undefined || Date.now() < ctx.deadline - slackMs) throw error
        const waiting = watched(ctx).filter((container) => probes.result(probed.get(container.name) ?? '', 'readiness') !== 'success')
        throw notReady(ctx, probes, probed, waiting, Date.now() - started)
      }
    }
  } finally {
    await probes.stop()
  }
}

/** The containers whose readiness makes the pod Ready: its sidecars and its app containers. */
function watched(ctx: PodWaitContext): ContainerModel[] {
  return longRunningContainers(ctx.pod).map(({container}) => container)
}

/** Adds each container's newest instance to the probe manager (a restarted one replaces the old). */
async function followContainers(
  ctx: PodWaitContext,
  probes: ProbeManager,
  probed: Map<string, string>,
  podIP: string | undefined,
): Promise<void> {
  for (const container of watched(ctx)) {
    const {id} = ctx.tracked.get(container.name)!
    if (probed.get(container.name) === id) continue
    const status = await containerStatus(ctx, id)
    if (status?.state !== 'CONTAINER_RUNNING') {
      const how = status ? `exited with code ${status.exitCode}` : 'is gone'
      throw new PodFailedError(`container "${container.name}" ${how} and will not become ready`, {
        reason: status?.reason || 'Completed',
        container: container.name,
      })
    }

    const previous = probed.get(container.name)
    if (previous) probes.removeContainer(previous)
    const startedAtMs = status.startedAt && status.startedAt !== '0' ? nanosToMs(status.startedAt) : Date.now()
    probes.addContainer({pod: ctx.pod, podSandboxId: ctx.sandboxId, podIP, containerName: container.name, containerId: id, startedAtMs})
    probed.set(container.name, id)
  }
}

/** "pod web_default is not ready after 30s: ContainersNotReady: containers with unready status: [app]; app: Readiness probe failed ..." */
function notReady(
  ctx: PodWaitContext,
  probes: ProbeManager,
  probed: Map<string, string>,
  unready: ContainerModel[],
  waitedMs: number,
): DeadlineExceededError {
  const names = unready.map((container) => container.name)
  const details = unready.map((container) => {
    const id = probed.get(container.name)
    return `${container.name}: ${id ? whyNotReady(probes, id, container) : 'not running yet'}`
  })
  return new DeadlineExceededError(
    `pod ${podFullName(ctx.pod.name, ctx.pod.namespace)} is not ready after ${formatMs(waitedMs)} (--timeout): ` +
      `ContainersNotReady: containers with unready status: [${names.join(' ')}]; ${details.join('; ')}`,
  )
}

function whyNotReady(probes: ProbeManager, containerId: string, container: ContainerModel): string {
  const kind: ProbeKind = container.startupProbe && !probes.isStarted(containerId) ? 'startup' : 'readiness'
  const name = kind === 'startup' ? 'Startup' : 'Readiness'
  const last = probes.lastOutput(containerId, kind)
  if (!last) return `no ${kind} probe has run yet`
  const verdict = probes.result(containerId, kind) === 'success' ? 'succeeded' : 'failed'
  const exit = last.exitCode === undefined ? '' : ` (exit code ${last.exitCode})`
  return `${name} probe ${verdict}${exit}: ${JSON.stringify(last.output.trim().slice(0, 500))}`
}
