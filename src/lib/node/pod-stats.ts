/**
 * `statsp`: CPU and memory per pod sandbox. ListPodSandboxStats where the runtime has it; where it
 * answers Unimplemented, or fails the whole call (containerd 1.6 does when any sandbox on the node
 * has no cgroup), the sum of the pod's containers from ListContainerStats (pause excluded).
 */
import type {CriClient} from '../cri/client.js'
import {PodctlError, UnimplementedError} from '../errors.js'
import {nameMatcher} from '../util/filters.js'
import {nanosToIso} from '../util/time.js'
import type {ContainerStats, CpuUsage, PodSandbox, PodSandboxStats} from '../../generated/runtime/v1/api.js'
import {matchPodSandboxes} from './resolve.js'
import {cpuPercent, sampleStats} from './stats.js'

export interface PodStatsFilters {
  /** A pod reference: name (in `namespace`, default "default"), name_namespace or sandbox ID prefix. */
  pod?: string
  /** Pod namespace, exact or with * globs (with `pod`: the pod's namespace). */
  namespace?: string
  /** Sandbox ID prefix. */
  id?: string
  /** Pod labels, exact. */
  labels?: Record<string, string>
}

/** One row of `podctl statsp`. */
export interface PodStatsSummary {
  podSandboxId: string
  podName: string
  namespace: string
  /** Percent of one core over the sampling window; null without two samples. */
  cpuPercent: number | null
  cpuUsageCoreNanoSeconds: string | null
  memoryWorkingSetBytes: string | null
  timestamp: string | null
  /** Where the figures come from: the pod-level call, or the sum of its containers. */
  source: 'ListPodSandboxStats' | 'ListContainerStats'
}

interface PodSample {
  cpu?: CpuUsage
  memory: string | null
  raw?: PodSandboxStats
  /** Its containers' sum, where the pod-level answer had neither CPU nor memory. */
  summed?: boolean
}

/** The ready sandboxes the filters select, newest first. */
export function selectPods(sandboxes: readonly PodSandbox[], filters: PodStatsFilters): PodSandbox[] {
  const ready = sandboxes.filter((pod) => pod.state === 'SANDBOX_READY')
  const candidates = filters.pod === undefined ? ready : matchPodSandboxes(ready, filters.pod, {namespace: filters.namespace})
  const matchNamespace = nameMatcher(filters.pod === undefined ? filters.namespace : undefined)
  return candidates.filter(
    (pod) =>
      (filters.id === undefined || pod.id.startsWith(filters.id)) &&
      matchNamespace(pod.metadata?.namespace ?? '') &&
      Object.entries(filters.labels ?? {}).every(([key, value]) => pod.labels[key] === value),
  )
}

/** Sums the containers' cumulative CPU and working set per sandbox (containerStats → its pod by the containers list). */
export function sumByPod(stats: readonly ContainerStats[], podOf: ReadonlyMap<string, string>): Map<string, PodSample> {
  const pods = new Map<string, PodSample & {usage: bigint; timestamp: bigint; memoryTotal: bigint; hasMemory: boolean}>()
  for (const container of stats) {
    const podId = podOf.get(container.attributes?.id ?? '')
    if (podId === undefined) continue
    const entry = pods.get(podId) ?? {memory: null, usage: 0n, timestamp: 0n, memoryTotal: 0n, hasMemory: false}
    const usage = container.cpu?.usageCoreNanoSeconds?.value
    if (usage !== undefined && container.cpu) {
      entry.usage += BigInt(usage)
      if (BigInt(container.cpu.timestamp) > entry.timestamp) entry.timestamp = BigInt(container.cpu.timestamp)
    }

    const memory = container.memory?.workingSetBytes?.value
    if (memory !== undefined) {
      entry.memoryTotal += BigInt(memory)
      entry.hasMemory = true
    }

    pods.set(podId, entry)
  }

  const out = new Map<string, PodSample>()
  for (const [podId, entry] of pods) {
    const cpu =
      entry.timestamp > 0n
        ? ({timestamp: String(entry.timestamp), usageCoreNanoSeconds: {value: String(entry.usage)}} as CpuUsage)
        : undefined
    out.set(podId, {cpu, memory: entry.hasMemory ? String(entry.memoryTotal) : null})
  }

  return out
}

async function samplePods(client: CriClient, viaContainers: boolean): Promise<{samples: Map<string, PodSample>; viaContainers: boolean}> {
  if (!viaContainers) {
    const response = await client.runtime('listPodSandboxStats', {filter: {labelSelector: {}}}).catch((error: unknown) => {
      // Unimplemented, or failed as a whole: containerd 1.6 fails the call for every pod when one sandbox has no cgroup.
      if (error instanceof UnimplementedError || (error instanceof PodctlError && error.code === 'RuntimeError')) return
      throw error
    })
    if (response) {
      const samples = new Map<string, PodSample>()
      for (const raw of response.stats) {
        samples.set(raw.attributes?.id ?? '', {cpu: raw.linux?.cpu, memory: raw.linux?.memory?.workingSetBytes?.value ?? null, raw})
      }

      // CRI-O with the cgroupfs driver (up to 1.36 at least) fails every pod's own cgroup stats (it reads the
      // pod cgroup as a systemd slice) and answers without CPU or memory: those pods get their containers' sum.
      const empty = [...samples.values()].filter((sample) => !sample.cpu && sample.memory === null)
      if (empty.length > 0) {
        const sums = await sumContainersByPod(client)
        for (const sample of empty) Object.assign(sample, sums.get(sample.raw?.attributes?.id ?? '') ?? {}, {summed: true})
      }

      return {samples, viaContainers: false}
    }
  }

  return {samples: await sumContainersByPod(client), viaContainers: true}
}

/** ListContainerStats and ListContainers: each pod's containers summed (sumByPod). */
async function sumContainersByPod(client: CriClient): Promise<Map<string, PodSample>> {
  const [stats, {containers}] = await Promise.all([sampleStats(client), client.runtime('listContainers', {})])
  const podOf = new Map(containers.map((container) => [container.id, container.podSandboxId]))
  return sumByPod(stats, podOf)
}

export interface PodStatsSampler {
  next(intervalMs: number, signal?: AbortSignal): Promise<PodStatsSummary[]>
  /** The last pod-level CRI PodSandboxStats (crictl's `statsp -o json` layout); empty when summed from containers. */
  criStats(): PodSandboxStats[]
}

/** Samples once now; each next() waits, samples again and diffs, as `stats` does. */
export async function startPodStatsSampler(client: CriClient, filters: PodStatsFilters): Promise<PodStatsSampler> {
  const [first, {items}] = await Promise.all([samplePods(client, false), client.runtime('listPodSandbox', {})])
  // Resolve the filters now, so a wrong --pod fails before any waiting.
  selectPods(items, filters)
  let previous = first
  let cri: PodSandboxStats[] = []
  return {
    async next(intervalMs, signal) {
      const {setTimeout: sleep} = await import('node:timers/promises')
      await sleep(intervalMs, undefined, {signal}).catch(() => {})
      const [current, listed] = await Promise.all([samplePods(client, previous.viaContainers), client.runtime('listPodSandbox', {})])
      const pods = selectPods(listed.items, filters)
      const rows = pods.map((pod): PodStatsSummary => {
        const now = current.samples.get(pod.id)
        const sampledAt = now?.cpu?.timestamp
        return {
          podSandboxId: pod.id,
          podName: pod.metadata?.name ?? '',
          namespace: pod.metadata?.namespace ?? '',
          cpuPercent: cpuPercent(previous.samples.get(pod.id)?.cpu, now?.cpu),
          cpuUsageCoreNanoSeconds: now?.cpu?.usageCoreNanoSeconds?.value ?? null,
          memoryWorkingSetBytes: now?.memory ?? null,
          timestamp: sampledAt ? nanosToIso(sampledAt) : null,
          source: current.viaContainers || now?.summed ? 'ListContainerStats' : 'ListPodSandboxStats',
        }
      })
      cri = pods.map((pod) => current.samples.get(pod.id)?.raw).filter((raw): raw is PodSandboxStats => raw !== undefined)
      previous = current
      return rows
    },
    criStats: () => cri,
  }
}
