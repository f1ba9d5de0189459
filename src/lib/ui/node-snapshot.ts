/**
 * One refresh of `podctl ui`: ListPodSandbox, ListContainers and ListContainerStats at once — three
 * calls whatever the number of pods, never one per pod — then every pod's status the kubelet's way
 * (kubelet/status/listed-pods.ts). What a listing lacks is asked once per object and kept by ID,
 * because it never changes afterwards: a ready sandbox's IP, an exited container's end. CPU is the
 * difference from the previous refresh's sample (crictl's formula).
 */
import type {CriClient} from '../cri/client.js'
import {PodctlError, UnimplementedError} from '../errors.js'
import type {Container, ContainerStats, ContainerStatus, PodSandbox} from '../../generated/runtime/v1/api.js'
import {sandboxIps} from '../kube/helpers.js'
import {containerPortsOf} from '../kube/labels.js'
import {cpuPercent, sampleStats} from '../node/stats.js'
import {mapLimit, RUNTIME_CALLS_IN_FLIGHT} from '../util/concurrency.js'
import {type ListedPodStatus, listedPodStatuses, type PodRecords, readPodRecords} from '../kubelet/status/listed-pods.js'
import {skipNotFound} from '../kubelet/status/pod-status.js'

/** A container's use now: CPU in cores (null before a second sample), working set in bytes. */
export interface Usage {
  cpuCores: number | null
  memoryBytes: number | null
}

export interface NodeSnapshot {
  pods: ListedPodStatus[]
  /** Container ID → its use; absent where the runtime gave no stats. */
  usage: ReadonlyMap<string, Usage>
  /** Container ID → its declared ports (`http:8080,9090`), from the kubelet's annotation. */
  ports: ReadonlyMap<string, string>
  /** Epoch ms. */
  takenAt: number
  /** How long the refresh took, ms. */
  tookMs: number
  /** Why CPU and memory are missing, when the runtime has no stats for anyone. */
  statsProblem?: string
  counts: {pods: number; readyPods: number; containers: number; runningContainers: number}
}

export interface NodeSamplerOptions {
  podDirRoot: string
  /** Only pods these filters keep are shown (-n, -l as `pods` takes them). */
  keep?: (sandbox: PodSandbox) => boolean
  labels?: Record<string, string>
  /**
   * How long a refresh waits for the IPs of sandboxes it has not seen (one PodSandboxStatus each);
   * the rest keep coming in the background and show at the next refresh. Default 250 ms, so the
   * first view of a node of hundreds of pods is not held up by them.
   */
  ipWaitMs?: number
}

/** See NodeSamplerOptions.ipWaitMs. */
const IP_WAIT_MS = 250

export class NodeSampler {
  private readonly ips = new Map<string, string>()
  /** The IPs being asked for, if a refresh left them coming. */
  private askingIps?: Promise<void>
  private readonly exited = new Map<string, ContainerStatus>()
  private previousStats = new Map<string, ContainerStats>()

  constructor(
    private readonly client: CriClient,
    private readonly options: NodeSamplerOptions,
  ) {}

  async sample(signal?: AbortSignal): Promise<NodeSnapshot> {
    const started = Date.now()
    const labelSelector = this.options.labels ?? {}
    const [{items}, {containers}, stats] = await Promise.all([
      this.client.runtime('listPodSandbox', {filter: {labelSelector}}, {signal}),
      this.client.runtime('listContainers', {filter: {}}, {signal}),
      sampleStats(this.client).then(
        (list): ContainerStats[] | PodctlError => list,
        (error: unknown) => (error instanceof PodctlError ? error : Promise.reject(error)),
      ),
    ])
    const sandboxes = this.options.keep ? items.filter(this.options.keep) : items
    const shown = new Set(sandboxes.map((sandbox) => sandbox.id))
    const ofShown = containers.filter((container) => shown.has(container.podSandboxId))
    const [records] = await Promise.all([this.readRecords(sandboxes), this.fillDetails(sandboxes, ofShown)])
    const pods = listedPodStatuses({sandboxes, containers: ofShown, sandboxIps: this.ips, exited: this.exited}, records)
    const usage = stats instanceof PodctlError ? new Map<string, Usage>() : this.usageOf(stats)
    this.forgetGone(items, containers)
    return {
      pods,
      usage,
      ports: new Map(ofShown.map((container) => [container.id, portsOf(container)])),
      takenAt: Date.now(),
      tookMs: Date.now() - started,
      statsProblem: stats instanceof PodctlError ? statsProblem(stats) : undefined,
      counts: {
        pods: sandboxes.length,
        readyPods: sandboxes.filter((sandbox) => sandbox.state === 'SANDBOX_READY').length,
        containers: ofShown.length,
        runningContainers: ofShown.filter((container) => container.state === 'CONTAINER_RUNNING').length,
      },
    }
  }

  /** The IP of each new ready sandbox and the end of each newly exited container: once per object. */
  private async fillDetails(sandboxes: readonly PodSandbox[], containers: readonly Container[]): Promise<void> {
    const containersToAsk = containers.filter((container) => container.state === 'CONTAINER_EXITED' && !this.exited.has(container.id))
    await Promise.all([
      this.fillIps(sandboxes),
      // Gone between the listing and the question: the next refresh no longer lists it.
      mapLimit(containersToAsk, RUNTIME_CALLS_IN_FLIGHT, async (container) => {
        const answer = await skipNotFound(this.client.runtime('containerStatus', {containerId: container.id, verbose: false}))
        if (answer?.status?.state === 'CONTAINER_EXITED') this.exited.set(container.id, answer.status)
      }),
    ])
  }

  /** New sandboxes' IPs, waited for at most ipWaitMs; a failed question is asked again at a later refresh. */
  private async fillIps(sandboxes: readonly PodSandbox[]): Promise<void> {
    if (!this.askingIps) {
      const toAsk = sandboxes.filter((sandbox) => sandbox.state === 'SANDBOX_READY' && !this.ips.has(sandbox.id))
      if (toAsk.length === 0) return
      this.askingIps = mapLimit(toAsk, RUNTIME_CALLS_IN_FLIGHT, async (sandbox) => {
        // Gone between the listing and the question: the next refresh no longer lists it.
        const answer = await skipNotFound(this.client.runtime('podSandboxStatus', {podSandboxId: sandbox.id, verbose: false}))
        // A sandbox without an IP (host network, a runtime that gave none) is asked once too.
        if (answer) this.ips.set(sandbox.id, sandboxIps(answer.status)[0] ?? '')
      })
        .then(() => undefined)
        .catch(() => undefined)
        .finally(() => {
          this.askingIps = undefined
        })
    }

    const waitMs = this.options.ipWaitMs ?? IP_WAIT_MS
    if (!Number.isFinite(waitMs)) return this.askingIps
    let timer: NodeJS.Timeout | undefined
    const waited = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, waitMs)
    })
    await Promise.race([this.askingIps, waited]).finally(() => clearTimeout(timer))
  }

  private async readRecords(sandboxes: readonly PodSandbox[]): Promise<Map<string, PodRecords>> {
    const uids = [...new Set(sandboxes.map((sandbox) => sandbox.metadata?.uid ?? '').filter((uid) => uid !== ''))]
    const records = new Map<string, PodRecords>()
    await mapLimit(uids, 16, async (uid) => {
      const found = await readPodRecords(this.options.podDirRoot, uid)
      if (found) records.set(uid, found)
    })
    return records
  }

  private usageOf(stats: readonly ContainerStats[]): Map<string, Usage> {
    const usage = new Map<string, Usage>()
    const current = new Map<string, ContainerStats>()
    for (const sample of stats) {
      const id = sample.attributes?.id ?? ''
      current.set(id, sample)
      const percent = cpuPercent(this.previousStats.get(id)?.cpu, sample.cpu)
      const memory = sample.memory?.workingSetBytes?.value
      usage.set(id, {cpuCores: percent === null ? null : percent / 100, memoryBytes: memory === undefined ? null : Number(memory)})
    }

    this.previousStats = current
    return usage
  }

  /** Drops what the runtime no longer holds, so the caches stay the size of the node. */
  private forgetGone(sandboxes: readonly PodSandbox[], containers: readonly Container[]): void {
    const sandboxIds = new Set(sandboxes.map((sandbox) => sandbox.id))
    const containerIds = new Set(containers.map((container) => container.id))
    for (const id of this.ips.keys()) if (!sandboxIds.has(id)) this.ips.delete(id)
    for (const id of this.exited.keys()) if (!containerIds.has(id)) this.exited.delete(id)
  }
}

function portsOf(container: Container): string {
  const ports = containerPortsOf(container.annotations)
  return ports.map((port) => (port.name ? `${port.name}:${port.containerPort}` : String(port.containerPort))).join(',')
}

function statsProblem(error: PodctlError): string {
  return error instanceof UnimplementedError ? 'the runtime has no ListContainerStats' : `no stats: ${error.message}`
}
