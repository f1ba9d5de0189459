/**
 * Readiness of a running pod for `status --wait-for ready`: the probes `run` recorded on each app
 * container and sidecar (io.podctl.probes) run in-process by a ProbeManager, as the kubelet's workers would run
 * them, while the wait polls the pod. A container is ready when it runs and its readiness probe
 * succeeded (started, if it has none).
 */
import type {CriClient} from '../../cri/client.js'
import type {Container} from '../../../generated/runtime/v1/api.js'
import {containerPortsOf, PodctlAnnotation, sidecarIndexOf} from '../../kube/labels.js'
import type {ContainerModel, PodModel, ProbeModel} from '../../manifest/model.js'
import {type ProbeLease, probesFor} from '../../prober/shared-probes.js'
import {nanosToMs} from '../../util/time.js'
import type {PodStatusReport} from './pod-status.js'

type RecordedProbes = Partial<Record<'livenessProbe' | 'readinessProbe' | 'startupProbe', ProbeModel>>

/** The probes recorded on a container; {} when none or unreadable. */
export function recordedProbes(annotations: Readonly<Record<string, string>>): RecordedProbes {
  try {
    const value: unknown = JSON.parse(annotations[PodctlAnnotation.probes] ?? '{}')
    return typeof value === 'object' && value !== null ? (value as RecordedProbes) : {}
  } catch {
    return {}
  }
}

/**
 * The newest instance of each container readiness counts: app containers and sidecars (restartable
 * init containers, as for the kubelet's ContainersReady), not the init containers that run to completion.
 */
function newestProbed(containers: readonly Container[]): Map<string, Container> {
  const newest = new Map<string, Container>()
  for (const container of containers) {
    const init = container.annotations[PodctlAnnotation.containerType] === 'init'
    if (init && sidecarIndexOf(container.annotations) === undefined) continue
    const name = container.metadata?.name ?? ''
    const seen = newest.get(name)
    if (!seen || (container.metadata?.attempt ?? 0) > (seen.metadata?.attempt ?? 0)) newest.set(name, container)
  }

  return newest
}

export class PodReadiness {
  private readonly probes: ProbeLease
  /** Container ID → whether it was seen running (and added). */
  private readonly followed = new Map<string, boolean>()
  private lastUnready: string[] = []
  private lastReady = new Set<string>()

  constructor(private readonly client: CriClient) {
    this.probes = probesFor(client).lease()
  }

  /** Follows the pod's newest app containers and sidecars; true when every one is running and ready. */
  async update(report: PodStatusReport): Promise<boolean> {
    const sandbox = report.sandboxes[0]
    if (!sandbox || sandbox.state !== 'Ready') return false
    const {containers} = await this.client.runtime('listContainers', {filter: {podSandboxId: sandbox.id}})
    const newest = newestProbed(containers)
    const unready: string[] = []
    const ready = new Set<string>()
    for (const [name, container] of newest) {
      if (container.state !== 'CONTAINER_RUNNING') {
        if (this.followed.get(container.id)) this.probes.containerStopped(container.id)
        unready.push(name)
        continue
      }

      if (!this.followed.has(container.id)) this.follow(report, sandbox.ip, container)
      if (this.probes.result(container.id, 'readiness') === 'success') ready.add(container.id)
      else unready.push(name)
    }

    for (const id of this.followed.keys()) {
      if (![...newest.values()].some((container) => container.id === id)) {
        this.probes.removeContainer(id)
        this.followed.delete(id)
      }
    }

    this.lastUnready = unready
    this.lastReady = ready
    return newest.size > 0 && unready.length === 0
  }

  /** The IDs of the running containers the last update found ready (their readiness probe passed, or they have none). */
  readyContainers(): ReadonlySet<string> {
    return this.lastReady
  }

  /** "app (Readiness probe failed: HTTP probe failed with statuscode: 404)" for each container not ready. */
  describe(report: PodStatusReport | undefined): string {
    if (!report) return ''
    return this.lastUnready
      .map((name) => {
        const id = report.containers.find((container) => container.name === name)?.id
        const last = id ? (this.probes.lastOutput(id, 'readiness') ?? this.probes.lastOutput(id, 'startup')) : undefined
        if (!last) return name
        const exit = last.exitCode === undefined ? '' : `, exit code ${last.exitCode}`
        return `${name} (last probe output${exit}: ${JSON.stringify(last.output.trim().slice(0, 300))})`
      })
      .join(', ')
  }

  stop(): Promise<void> {
    return this.probes.stop()
  }

  private follow(report: PodStatusReport, ip: string | null, container: Container): void {
    const name = container.metadata?.name ?? ''
    const model = {name, ports: containerPortsOf(container.annotations), ...recordedProbes(container.annotations)} as ContainerModel
    const pod = {
      name: report.name,
      namespace: report.namespace,
      uid: report.uid,
      containers: [model],
      initContainers: [],
    } as unknown as PodModel
    const status = report.containers.find((candidate) => candidate.id === container.id)
    const startedAtMs = status?.startedAt ? Date.parse(status.startedAt) : nanosToMs(container.createdAt)
    // A host-network pod has no IP of its own: its ports listen on the node.
    this.probes.addContainer({
      pod,
      podSandboxId: container.podSandboxId,
      podIP: ip ?? '127.0.0.1',
      containerName: name,
      containerId: container.id,
      startedAtMs,
    })
    this.followed.set(container.id, true)
  }
}
