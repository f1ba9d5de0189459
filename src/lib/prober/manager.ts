/**
 * The kubelet's prober manager and results managers (pkg/kubelet/prober/prober_manager.go,
 * results/results_manager.go): one worker per probe of each container added, results kept per
 * container and probe kind, listeners told when a result changes. A process has one per runtime,
 * shared through leases (shared-probes.ts) by the supervisor, the waits of `run --wait ready` /
 * `status --wait-for ready` and SyncPod's wait for a sidecar's startup.
 */
import type {CriClient} from '../cri/client.js'
import {NotFoundError} from '../errors.js'
import type {ContainerModel, PodModel, ProbeModel} from '../manifest/model.js'
import {EXEC_PROBES_IN_FLIGHT, Limiter} from '../util/concurrency.js'
import {probeEvent, type ProbeKind, runProbe} from './prober.js'
import type {ProbeOutcome} from './types.js'
import {INITIAL_RESULT, type ProbeResult, ProbeWorker} from './worker.js'

export type {ProbeKind} from './prober.js'
export type {ProbeResult} from './worker.js'

export interface ProbeTarget {
  pod: PodModel
  podSandboxId: string
  podIP?: string
  containerName: string
  containerId: string
  /** Epoch ms the container started (initialDelaySeconds counts from here). */
  startedAtMs: number
}

export interface ProbeEvent {
  type: 'Normal' | 'Warning'
  reason: string
  message: string
  containerName: string
  containerId: string
  podSandboxId: string
}

export interface ProbeRequest {
  probe: ProbeModel
  kind: ProbeKind
  target: ProbeTarget
  container: ContainerModel
  signal: AbortSignal
}

export interface ProbeManagerDeps {
  client: CriClient
  now?: () => number
  onEvent?: (event: ProbeEvent) => void
  /** Runs one probe (tests replace it); default: the kubelet's prober with its handlers. Resolves, never rejects. */
  runProbe?: (request: ProbeRequest) => Promise<ProbeOutcome>
  /** For the start-up jitter; default Math.random. */
  random?: () => number
  /** Exec probes (ExecSync) in flight at once across all containers; default EXEC_PROBES_IN_FLIGHT. */
  execProbesInFlight?: number
  /** After every probe that ran (the kubelet's prober_probe_total counts each one, thresholds aside). */
  onProbed?: (target: ProbeTarget, kind: ProbeKind, outcome: ProbeOutcome) => void
  /** How late (ms) a worker's period tick ran against its schedule. */
  onLate?: (lateMs: number, containerId: string) => void
}

const KINDS: readonly ProbeKind[] = ['startup', 'liveness', 'readiness']
const PROBE_FIELD = {liveness: 'livenessProbe', readiness: 'readinessProbe', startup: 'startupProbe'} as const

interface Entry {
  target: ProbeTarget
  workers: Map<ProbeKind, ProbeWorker>
  results: Map<ProbeKind, ProbeResult>
  outputs: Map<ProbeKind, {output: string; exitCode?: number}>
  running: boolean
}

type Listener = (containerId: string, kind: ProbeKind, result: ProbeResult) => void

export class ProbeManager {
  private readonly entries = new Map<string, Entry>()
  private readonly listeners = new Set<Listener>()
  private readonly stopping: Array<Promise<void>> = []
  private readonly now: () => number
  private readonly started: number
  private readonly runProbe: NonNullable<ProbeManagerDeps['runProbe']>

  constructor(private readonly deps: ProbeManagerDeps) {
    this.now = deps.now ?? Date.now
    this.started = this.now()
    const execSlots = new Limiter(deps.execProbesInFlight ?? EXEC_PROBES_IN_FLIGHT, 'probe stopped')
    this.runProbe = deps.runProbe ?? defaultRunner(deps.client, execSlots)
  }

  /** Starts a worker for each probe the container has (a container already known is replaced). */
  addContainer(target: ProbeTarget): void {
    if (this.entries.has(target.containerId)) this.removeContainer(target.containerId)
    const container = [...target.pod.containers, ...target.pod.initContainers].find((candidate) => candidate.name === target.containerName)
    if (!container) throw new Error(`pod ${target.pod.name} has no container named ${target.containerName}`)
    const entry: Entry = {target, workers: new Map(), results: new Map(), outputs: new Map(), running: true}
    this.entries.set(target.containerId, entry)
    for (const kind of KINDS) {
      const probe = container[PROBE_FIELD[kind]]
      if (!probe) continue
      entry.workers.set(kind, this.newWorker(entry, container, kind, probe))
      this.set(entry, kind, INITIAL_RESULT[kind])
    }

    for (const worker of entry.workers.values()) worker.start(this.jitterMs(target, worker.spec))
  }

  /** Stops the container's workers and forgets its results (a restarted container comes back with a new ID). */
  removeContainer(containerId: string): void {
    const entry = this.entries.get(containerId)
    if (!entry) return
    this.entries.delete(containerId)
    for (const worker of entry.workers.values()) this.stopping.push(worker.stop())
  }

  /**
   * The container is no longer running (the reconciler saw it exit): readiness is Failure and no
   * probe runs again until a new container is added, as the kubelet's workers do.
   */
  containerStopped(containerId: string): void {
    const entry = this.entries.get(containerId)
    if (!entry || !entry.running) return
    entry.running = false
    for (const worker of entry.workers.values()) worker.containerStopped()
    if (!entry.workers.has('readiness')) this.emit(containerId, 'readiness', 'failure')
  }

  /**
   * The current result: 'success' when the container has no such probe, except readiness, which is
   * then whether the container started (and is running); 'unknown' for a container never added.
   */
  result(containerId: string, kind: ProbeKind): ProbeResult {
    const entry = this.entries.get(containerId)
    if (!entry) return 'unknown'
    if (entry.workers.has(kind)) return entry.results.get(kind) ?? INITIAL_RESULT[kind]
    if (kind !== 'readiness') return 'success'
    return entry.running && this.hasStarted(entry) ? 'success' : 'failure'
  }

  /** Whether the container has started: its startup probe succeeded, or it has none (ContainerStatus.started). */
  isStarted(containerId: string): boolean {
    const entry = this.entries.get(containerId)
    return entry !== undefined && entry.running && this.hasStarted(entry)
  }

  /** The output (and exit code, for exec) of the last probe of that kind that ran. */
  lastOutput(containerId: string, kind: ProbeKind): {output: string; exitCode?: number} | undefined {
    return this.entries.get(containerId)?.outputs.get(kind)
  }

  /** Called on every change of a result (and with each probe's initial value); returns the unsubscribe. */
  onResult(listener: Listener): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  /** Stops every worker and waits for probes in flight (each bounded by its own timeout). */
  async stop(): Promise<void> {
    for (const id of this.entries.keys()) this.removeContainer(id)
    await Promise.all(this.stopping.splice(0))
  }

  private hasStarted(entry: Entry): boolean {
    return !entry.workers.has('startup') || entry.results.get('startup') === 'success'
  }

  private newWorker(entry: Entry, container: ContainerModel, kind: ProbeKind, probe: ProbeModel): ProbeWorker {
    const {target} = entry
    const run = this.runProbe
    return new ProbeWorker(kind, probe, {
      now: this.now,
      startedAtMs: target.startedAtMs,
      started: () => this.hasStarted(entry),
      probe: (signal) => run({probe, kind, target, container, signal}),
      late: this.deps.onLate && ((lateMs: number) => this.deps.onLate?.(lateMs, target.containerId)),
      observed: (outcome) => {
        this.deps.onProbed?.(target, kind, outcome)
        entry.outputs.set(
          kind,
          outcome.exitCode === undefined ? {output: outcome.output} : {output: outcome.output, exitCode: outcome.exitCode},
        )
        const event = probeEvent(kind, outcome)
        if (!event) return
        const {containerName, containerId, podSandboxId} = target
        const report = () => this.deps.onEvent?.({...event, containerName, containerId, podSandboxId})
        // A probe that errored because its container just exited says nothing: the kubelet probes running containers only.
        if (outcome.status === 'unknown') void this.stillRunning(target.containerId).then((running) => running && report())
        else report()
      },
      set: (result) => {
        if (this.entries.get(target.containerId) !== entry) return
        this.set(entry, kind, result)
        // The kubelet's status update triggers a readiness probe once the container has started.
        if (kind === 'startup' && result === 'success') entry.workers.get('readiness')?.trigger()
      },
    })
  }

  /** Whether the runtime still runs the container (an unanswered question counts as yes: the error is worth seeing). */
  private async stillRunning(containerId: string): Promise<boolean> {
    return this.deps.client
      .runtime('containerStatus', {containerId, verbose: false})
      .then(({status}) => status?.state === 'CONTAINER_RUNNING')
      .catch((error: unknown) => !(error instanceof NotFoundError))
  }

  private set(entry: Entry, kind: ProbeKind, result: ProbeResult): void {
    const before = entry.results.get(kind)
    entry.results.set(kind, result)
    if (before !== result) this.emit(entry.target.containerId, kind, result)
  }

  private emit(containerId: string, kind: ProbeKind, result: ProbeResult): void {
    for (const listener of this.listeners) listener(containerId, kind, result)
  }

  /**
   * The kubelet waits a random part of the period before a worker's first probe when it started
   * less than a period ago, so probes of containers it finds running do not all fire at once. A
   * container started after the manager is new: its probes start at once, as a running kubelet's do.
   */
  private jitterMs(target: ProbeTarget, probe: ProbeModel): number {
    const period = probe.periodSeconds * 1000
    if (target.startedAtMs >= this.started || this.now() - this.started >= period) return 0
    return Math.floor((this.deps.random ?? Math.random)() * period)
  }
}

function defaultRunner(client: CriClient, execSlots: Limiter): NonNullable<ProbeManagerDeps['runProbe']> {
  return ({probe, target, container, signal}) =>
    runProbe(probe, {client, container, containerId: target.containerId, podIP: target.podIP, signal, execSlots})
}
