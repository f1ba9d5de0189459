/**
 * `run --wait ready`: every app container running and ready by its readiness probe (started, if it
 * has none), with the probes run in-process by the process's probe manager (a lease of it:
 * prober/shared-probes.ts) as the kubelet's workers would run them. Containers that exit meanwhile
 * are restarted per restartPolicy by the next SyncPod pass (pod-wait.ts). When --timeout runs out, the
 * error says which containers are not ready and why: the pod condition's reason (ContainersNotReady)
 * and each probe's last output and exit code.
 */
import {DeadlineExceededError, formatMs} from '../../errors.js'
import type {ContainerModel, PodModel} from '../../manifest/model.js'
import type {ProbeKind} from '../../prober/manager.js'
import {type ProbeLease, probesFor} from '../../prober/shared-probes.js'
import {warningEvent} from '../../kube/events.js'
import {podFullName} from '../../kube/helpers.js'
import {nanosToMs} from '../../util/time.js'
import {containerObject} from '../kuberuntime/container.js'
import type {ContainerType} from '../../kube/labels.js'
import {type ObservedContainer, policyRestarts} from '../kuberuntime/pod-actions.js'
import type {PodWaitContext} from './wait-context.js'
import {PodFailedError} from '../core/reasons.js'
import {containerStatus} from './settle.js'
import {longRunningContainers} from '../kuberuntime/sidecars.js'

/** The host probes reach the pod at: its IP, or loopback for a host-network pod (it listens on the node). */
export function probeHost(pod: Pick<PodModel, 'hostNetwork'>, ips: readonly string[]): string | undefined {
  return ips[0] ?? (pod.hostNetwork ? '127.0.0.1' : undefined)
}

/**
 * Between SyncPod passes: each sidecar's and app container's newest instance is probed (a restarted
 * one replaces the old); allReady says whether every one of them passes its readiness probe.
 */
export class ReadinessWatch {
  private readonly probes: ProbeLease
  /** Container name → the instance being probed. */
  private readonly probed = new Map<string, string>()
  private readonly started = Date.now()

  constructor(
    private readonly ctx: PodWaitContext,
    private readonly podIP: string | undefined,
  ) {
    this.probes = probesFor(ctx.client).lease({
      onEvent(event) {
        const container = [...ctx.pod.containers, ...ctx.pod.initContainers].find((candidate) => candidate.name === event.containerName)
        ctx.events(warningEvent(event.reason, event.message, container ? containerObject(ctx.pod, container) : ctx.object))
      },
    })
  }

  async allReady(newest: (name: string, type: ContainerType) => ObservedContainer | undefined): Promise<boolean> {
    const {ctx, probes, probed} = this
    for (const {container, type, restartPolicy} of longRunningContainers(ctx.pod)) {
      const status = newest(container.name, type)
      if (!status) return false
      if (status.state !== 'Running') {
        // An exited container is restarted by the next pass, when its policy restarts it.
        if (policyRestarts(restartPolicy, status.exitCode)) continue
        const how = status.exitCode === null ? 'is gone' : `exited with code ${status.exitCode}`
        throw new PodFailedError(`container "${container.name}" ${how} and will not become ready`, {
          reason: status.reason || 'Completed',
          container: container.name,
        })
      }

      if (probed.get(container.name) === status.id) continue
      const running = await containerStatus(ctx, status.id)
      const previous = probed.get(container.name)
      if (previous) probes.removeContainer(previous)
      const startedAtMs = running?.startedAt && running.startedAt !== '0' ? nanosToMs(running.startedAt) : Date.now()
      probes.addContainer({
        pod: ctx.pod,
        podSandboxId: ctx.sandboxId,
        podIP: this.podIP,
        containerName: container.name,
        containerId: status.id,
        startedAtMs,
      })
      probed.set(container.name, status.id)
    }

    const unready = this.unready()
    if (unready.length === 0) return true
    ctx.step(`waiting for ${unready.map((container) => container.name).join(', ')} to be ready`)
    return false
  }

  /** --timeout ran out, in the wait or in a runtime call it bounded: the error says why the pod is not ready. */
  explain(error: unknown): unknown {
    const {ctx} = this
    // (The client's own deadline for the command may end a little before the run's.)
    const slackMs = Math.max(ctx.pollMs, 2000)
    if (!(error instanceof DeadlineExceededError) || ctx.deadline === undefined || Date.now() < ctx.deadline - slackMs) return error
    return notReady(ctx, this.probes, this.probed, this.unready(), Date.now() - this.started)
  }

  async stop(): Promise<void> {
    await this.probes.stop()
  }

  private unready(): ContainerModel[] {
    return watched(this.ctx).filter((container) => this.probes.result(this.probed.get(container.name) ?? '', 'readiness') !== 'success')
  }
}

/** The containers whose readiness makes the pod Ready: its sidecars and its app containers. */
function watched(ctx: PodWaitContext): ContainerModel[] {
  return longRunningContainers(ctx.pod).map(({container}) => container)
}

/** "pod web_default is not ready after 30s: ContainersNotReady: containers with unready status: [app]; app: Readiness probe failed ..." */
function notReady(
  ctx: PodWaitContext,
  probes: ProbeLease,
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

function whyNotReady(probes: ProbeLease, containerId: string, container: ContainerModel): string {
  const kind: ProbeKind = container.startupProbe && !probes.isStarted(containerId) ? 'startup' : 'readiness'
  const name = kind === 'startup' ? 'Startup' : 'Readiness'
  const last = probes.lastOutput(containerId, kind)
  if (!last) return `no ${kind} probe has run yet`
  const verdict = probes.result(containerId, kind) === 'success' ? 'succeeded' : 'failed'
  const exit = last.exitCode === undefined ? '' : ` (exit code ${last.exitCode})`
  return `${name} probe ${verdict}${exit}: ${JSON.stringify(last.output.trim().slice(0, 500))}`
}
