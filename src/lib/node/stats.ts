import type {CriClient} from '../cri/client.js'
import {nanosToIso} from '../util/time.js'
import type {Container, ContainerStats, CpuUsage, PodSandbox} from '../../generated/runtime/v1/api.js'
import {selectContainers as selectListedContainers} from './containers.js'
import {matchContainerRef} from './resolve.js'

export interface StatsFilters {
  /** A container reference (ID prefix or POD/CONTAINER, as logs and exec take); an ambiguous or unknown one is an error. */
  container?: string
  /** Container ID prefix, as a filter. */
  id?: string
  /** Pod name (in `namespace`, default "default"), name_namespace, or sandbox ID prefix. */
  pod?: string
  /** Pod namespace, exact or with * globs. */
  namespace?: string
  /** Container labels, matched by the runtime. */
  labels?: Record<string, string>
  /** Include containers that are not running. */
  all?: boolean
}

/** One row of `podctl stats`: podctl's own summary (stable keys, int64 as strings, RFC 3339 times). */
export interface ContainerStatsSummary {
  containerId: string
  name: string
  podSandboxId: string
  podName: string
  namespace: string
  state: string
  /** Percent of one core over the sampling window; null without two samples. */
  cpuPercent: number | null
  /** Total CPU time so far, nanoseconds. */
  cpuUsageCoreNanoSeconds: string | null
  memoryWorkingSetBytes: string | null
  writableLayerUsedBytes: string | null
  writableLayerInodesUsed: string | null
  /** When the runtime took the (second) sample. */
  timestamp: string | null
}

/**
 * The containers stats are shown for: ps's selection (the same flags mean the same thing), plus
 * stats' positional container reference, which must name exactly one container.
 */
export function selectContainers(containers: readonly Container[], sandboxes: readonly PodSandbox[], filters: StatsFilters): Container[] {
  const {container, id, pod, namespace, all} = filters
  // POD/CONTAINER names its pod in --namespace when that is one namespace (a glob only filters).
  const podNamespace = namespace === undefined || namespace.includes('*') ? undefined : namespace
  const candidates = container === undefined ? containers : [matchContainerRef(containers, sandboxes, container, {namespace: podNamespace})]
  const entries = selectListedContainers(candidates, sandboxes, {id, pod, namespace, all: all || container !== undefined})
  return entries.map((entry) => entry.container)
}

/**
 * CPU use between two samples as a percentage of one core: Δ usage_core_nanoseconds over Δ
 * timestamp (crictl's formula). Null when a sample is missing or the clock did not advance.
 */
export function cpuPercent(previous: CpuUsage | undefined, current: CpuUsage | undefined): number | null {
  const before = previous?.usageCoreNanoSeconds?.value
  const after = current?.usageCoreNanoSeconds?.value
  if (before === undefined || after === undefined || !previous || !current) return null
  const elapsed = BigInt(current.timestamp) - BigInt(previous.timestamp)
  if (elapsed <= 0n) return null
  const used = BigInt(after) - BigInt(before)
  if (used < 0n) return null // the container restarted between the samples
  return Math.round((Number(used) / Number(elapsed)) * 100 * 100) / 100
}

/** Joins the selected containers with their two samples and their pods' names. */
export function summarizeStats(
  containers: readonly Container[],
  sandboxes: readonly PodSandbox[],
  first: readonly ContainerStats[],
  second: readonly ContainerStats[],
): ContainerStatsSummary[] {
  const before = byContainerId(first)
  const after = byContainerId(second)
  const pods = new Map(sandboxes.map((pod) => [pod.id, pod]))
  return containers.map((container) => {
    const pod = pods.get(container.podSandboxId)
    const stats = after.get(container.id)
    const value = (v: {value: string} | undefined) => v?.value ?? null
    const sampledAt = stats?.cpu?.timestamp ?? stats?.memory?.timestamp
    return {
      containerId: container.id,
      name: container.metadata?.name ?? '',
      podSandboxId: container.podSandboxId,
      podName: pod?.metadata?.name ?? '',
      namespace: pod?.metadata?.namespace ?? '',
      state: container.state,
      cpuPercent: cpuPercent(before.get(container.id)?.cpu, stats?.cpu),
      cpuUsageCoreNanoSeconds: value(stats?.cpu?.usageCoreNanoSeconds),
      memoryWorkingSetBytes: value(stats?.memory?.workingSetBytes),
      writableLayerUsedBytes: value(stats?.writableLayer?.usedBytes),
      writableLayerInodesUsed: value(stats?.writableLayer?.inodesUsed),
      timestamp: sampledAt ? nanosToIso(sampledAt) : null,
    }
  })
}

function byContainerId(stats: readonly ContainerStats[]): Map<string, ContainerStats> {
  return new Map(stats.map((s) => [s.attributes?.id ?? '', s]))
}

/**
 * ListContainerStats costs the runtime one shim round-trip per container (containerd 1.6), so on
 * a busy node it is slow; like the kubelet (2 min runtime request timeout) give it room even when
 * --timeout is short.
 */
export const STATS_DEADLINE_FLOOR_MS = 60_000

/** One ListContainerStats call (the label selector is applied by the runtime). */
export async function sampleStats(client: CriClient, labels: Record<string, string> = {}): Promise<ContainerStats[]> {
  const timeoutMs = Math.max(client.deadlineFor('listContainerStats'), STATS_DEADLINE_FLOOR_MS)
  return (await client.runtime('listContainerStats', {filter: {labelSelector: labels}}, {timeoutMs})).stats
}

export interface StatsSampler {
  /** Waits `intervalMs` after the previous sample, samples again, and returns one row per selected container. */
  next(intervalMs: number): Promise<ContainerStatsSummary[]>
  /** The last sample's CRI ContainerStats of the rows next() returned, in their order (crictl's `stats -o json`). */
  criStats(): ContainerStats[]
}

interface Snapshot {
  stats: ContainerStats[]
  selected: Container[]
  sandboxes: PodSandbox[]
}

/**
 * Starts sampling. Each snapshot is one ListContainerStats with one ListContainers and one
 * ListPodSandbox (for names) in parallel, never a call per container. The first `next()` reuses
 * the first snapshot's lists; later ones (--watch) list again so new containers appear. Each
 * `next()` diffs against the sample before it.
 */
export async function startStatsSampler(client: CriClient, filters: StatsFilters, signal?: AbortSignal): Promise<StatsSampler> {
  const labels = filters.labels ?? {}
  const snapshot = async (withLists: boolean, lists?: Snapshot): Promise<Snapshot> => {
    const [stats, containers, sandboxes] = await Promise.all([
      sampleStats(client, labels),
      withLists ? client.runtime('listContainers', {filter: {labelSelector: labels}}).then((r) => r.containers) : undefined,
      withLists ? client.runtime('listPodSandbox', {}).then((r) => r.items) : undefined,
    ])
    if (!containers || !sandboxes) return {...lists!, stats}
    // Resolve the filters now, so a wrong --pod or container fails before any waiting.
    return {stats, sandboxes, selected: selectContainers(containers, sandboxes, filters)}
  }

  let previous = await snapshot(true)
  let refreshes = 0
  let cri: ContainerStats[] = []
  return {
    async next(intervalMs: number) {
      await sleepUnlessAborted(intervalMs, signal)
      const current = await snapshot(refreshes++ > 0, previous)
      const rows = summarizeStats(current.selected, current.sandboxes, previous.stats, current.stats)
      const byId = byContainerId(current.stats)
      cri = rows.map((row) => byId.get(row.containerId)).filter((stats): stats is ContainerStats => stats !== undefined)
      previous = current
      return rows
    },
    criStats: () => cri,
  }
}

async function sleepUnlessAborted(ms: number, signal?: AbortSignal): Promise<void> {
  const {setTimeout: sleep} = await import('node:timers/promises')
  await sleep(ms, undefined, {signal}).catch(() => {})
}
