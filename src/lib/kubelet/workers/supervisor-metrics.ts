/**
 * What the supervisor (`sync --watch`, `run --supervise`) reports into the metrics registry, under
 * the kubelet's names where the kubelet has one (pkg/kubelet/metrics, pkg/kubelet/prober's
 * prober_probe_total) and podctl_ names otherwise. Counts by state come from the supervisor's own
 * listing (the supervised pods only, not everything the runtime runs); probe counts from every probe
 * that ran; lag from how late the listing loop, a pod worker's deadline timer (back-off expiry,
 * resync) and probe workers' period ticks fired against their schedule.
 */
import type {Container, PodSandbox} from '../../../generated/runtime/v1/api.js'
import type {ProbeKind} from '../../prober/prober.js'
import type {ProbeStatus} from '../../prober/types.js'
import {type HistogramFamily, MetricsRegistry, type ValueFamily} from '../../metrics/registry.js'

/** The kubelet's probe_type values. */
const PROBE_TYPE: Record<ProbeKind, string> = {liveness: 'Liveness', readiness: 'Readiness', startup: 'Startup'}
/** The kubelet's result values: a warning counts as success, as in its prober. */
const PROBE_RESULT: Record<ProbeStatus, string> = {success: 'successful', warning: 'successful', failure: 'failed', unknown: 'unknown'}
/** kubecontainer.State as the kubelet's container_state label spells it. */
const CONTAINER_STATES: Record<string, string> = {
  CONTAINER_CREATED: 'created',
  CONTAINER_RUNNING: 'running',
  CONTAINER_EXITED: 'exited',
  CONTAINER_UNKNOWN: 'unknown',
}
const SANDBOX_STATES: Record<string, string> = {SANDBOX_READY: 'ready', SANDBOX_NOTREADY: 'notready'}
/** Lag buckets (seconds): a supervisor on time is within milliseconds; a stalled event loop shows up in the seconds. */
const LAG_BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

export type LagSource = 'listing' | 'probe' | 'worker'

export interface ProbedContainer {
  pod: {name: string; namespace: string; uid: string}
  containerName: string
}

export class SupervisorMetrics {
  private readonly probes: ValueFamily
  private readonly runningPods: ValueFamily
  private readonly runningContainers: ValueFamily
  private readonly sandboxes: ValueFamily
  private readonly restarts: ValueFamily
  private readonly backOff: ValueFamily
  private readonly lag: HistogramFamily
  private readonly backOffByPod = new Map<string, {namespace: string; pod: string; waiting: number}>()

  constructor(readonly registry = new MetricsRegistry()) {
    this.probes = registry.counter(
      'prober_probe_total',
      'Cumulative number of a liveness, readiness or startup probe for a container by result.',
      ['probe_type', 'result', 'container', 'pod', 'namespace', 'pod_uid'],
    )
    this.runningPods = registry.gauge('kubelet_running_pods', 'Number of supervised pods that have a running pod sandbox.')
    this.runningContainers = registry.gauge('kubelet_running_containers', 'Number of containers of the supervised pods, by state.', [
      'container_state',
    ])
    this.sandboxes = registry.gauge('podctl_pod_sandboxes', 'Number of pod sandboxes of the supervised pods (every attempt), by state.', [
      'sandbox_state',
    ])
    this.restarts = registry.counter(
      'podctl_container_restarts_total',
      "Restarts of each supervised pod's containers (the newest attempt the runtime lists, as restartCount).",
      ['namespace', 'pod', 'container'],
    )
    this.backOff = registry.gauge(
      'podctl_containers_in_crash_backoff',
      'Containers of the pod waiting out their crash back-off at its last sync.',
      ['namespace', 'pod'],
    )
    this.lag = registry.histogram(
      'podctl_supervisor_lag_seconds',
      "How late the supervisor's listing, a pod worker's deadline (back-off, resync) or a probe ran against its schedule, in seconds.",
      ['loop'],
      LAG_BUCKETS,
    )
    registry.onCollect(() => {
      this.backOff.clear()
      for (const {namespace, pod, waiting} of this.backOffByPod.values()) this.backOff.set({namespace, pod}, waiting)
    })
  }

  probeRan(target: ProbedContainer, kind: ProbeKind, status: ProbeStatus): void {
    const {pod} = target
    this.probes.inc({
      probe_type: PROBE_TYPE[kind],
      result: PROBE_RESULT[status],
      container: target.containerName,
      pod: pod.name,
      namespace: pod.namespace,
      pod_uid: pod.uid,
    })
  }

  /** One listing of the supervised pods: the counts by state and the restart counts are replaced. */
  listed(targets: ReadonlyArray<{fullName: string; sandboxes: readonly PodSandbox[]}>, containers: readonly Container[]): void {
    const sandboxes = targets.flatMap((target) => target.sandboxes)
    const podOf = new Map(sandboxes.map((sandbox) => [sandbox.id, sandbox.metadata]))
    const theirs = containers.filter((container) => podOf.has(container.podSandboxId))
    this.runningPods.set({}, targets.filter((target) => target.sandboxes.some((sandbox) => sandbox.state === 'SANDBOX_READY')).length)
    countByState(
      this.runningContainers,
      'container_state',
      CONTAINER_STATES,
      theirs.map((container) => container.state),
    )
    countByState(
      this.sandboxes,
      'sandbox_state',
      SANDBOX_STATES,
      sandboxes.map((sandbox) => sandbox.state),
    )
    this.countRestarts(theirs, podOf)
    // A pod no longer supervised drops out of the back-off gauge.
    const supervised = new Set(targets.map((target) => target.fullName))
    for (const fullName of this.backOffByPod.keys()) if (!supervised.has(fullName)) this.backOffByPod.delete(fullName)
  }

  /** After a pod's sync: how many of its containers wait out a crash back-off (0 once none does). */
  backOffWaiting(pod: {name: string; namespace: string}, waiting: number): void {
    this.backOffByPod.set(`${pod.name}_${pod.namespace}`, {namespace: pod.namespace, pod: pod.name, waiting})
  }

  late(source: LagSource, lateMs: number): void {
    this.lag.observe({loop: source}, Math.max(0, lateMs) / 1000)
  }

  /** restartCount per container name: the newest attempt among the pod's listed containers. */
  private countRestarts(containers: readonly Container[], podOf: Map<string, PodSandbox['metadata']>): void {
    this.restarts.clear()
    for (const container of containers) {
      const pod = podOf.get(container.podSandboxId)
      const labels = {namespace: pod?.namespace ?? '', pod: pod?.name ?? '', container: container.metadata?.name ?? ''}
      this.restarts.set(labels, Math.max(this.restarts.value(labels) ?? 0, container.metadata?.attempt ?? 0))
    }
  }
}

/** Every state of the table is a series (0 when none), and a state outside it counts as the table's last. */
function countByState(family: ValueFamily, label: string, names: Record<string, string>, states: readonly string[]): void {
  const all = Object.values(names)
  for (const name of all) family.set({[label]: name}, 0)
  for (const state of states) family.inc({[label]: names[state] ?? all.at(-1)!})
}
