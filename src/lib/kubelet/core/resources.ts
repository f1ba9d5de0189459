/**
 * CPU/memory limits → Linux cgroup settings, and the pod's QoS class → OOM score, with the
 * kubelet's numbers (kuberuntime helpers_linux.go, pkg/kubelet/qos): shares from the CPU request
 * (which defaults to the limit), CFS quota over a 100 ms period from the CPU limit, and the
 * memory limit in bytes.
 */
import type {ContainerModel, PodModel, ResourceListModel} from '../../manifest/model.js'
import {parseQuantity, quantityMilliValue, quantityValue} from '../../manifest/quantity.js'

const CPU_PERIOD_US = 100_000n
const MIN_SHARES = 2n
const SHARES_PER_CPU = 1024n
const MIN_QUOTA_US = 1000n
const GUARANTEED_OOM_SCORE_ADJ = -997
const BEST_EFFORT_OOM_SCORE_ADJ = 1000

export type QosClass = 'Guaranteed' | 'Burstable' | 'BestEffort'

export interface LinuxResources {
  cpuPeriod: string
  cpuQuota: string
  cpuShares: string
  memoryLimitInBytes: string
  oomScoreAdj?: string
}

/** What a container asks for after the API server's defaulting: a missing request defaults to the limit. */
export interface EffectiveResources {
  cpuRequestMilli: bigint
  cpuLimitMilli: bigint
  memoryRequestBytes: bigint
  memoryLimitBytes: bigint
}

export function effectiveResources(container: ContainerModel): EffectiveResources {
  const milli = (text?: string) => (text === undefined ? 0n : quantityMilliValue(parseQuantity(text)!))
  const bytes = (text?: string) => (text === undefined ? 0n : quantityValue(parseQuantity(text)!))
  const {limits, requests} = container.resources
  return {
    cpuLimitMilli: milli(limits.cpu),
    cpuRequestMilli: milli(requests.cpu ?? limits.cpu),
    memoryLimitBytes: bytes(limits.memory),
    memoryRequestBytes: bytes(requests.memory ?? limits.memory),
  }
}

export function milliCpuToShares(milli: bigint): bigint {
  if (milli === 0n) return MIN_SHARES
  const shares = (milli * SHARES_PER_CPU) / 1000n
  return shares < MIN_SHARES ? MIN_SHARES : shares
}

export function milliCpuToQuota(milli: bigint, period: bigint = CPU_PERIOD_US): bigint {
  if (milli === 0n) return 0n
  const quota = (milli * period) / 1000n
  return quota < MIN_QUOTA_US ? MIN_QUOTA_US : quota
}

/** The kubelet's calculateLinuxResources(cpuRequest, cpuLimit, memoryLimit). */
export function linuxResources(cpuRequestMilli: bigint, cpuLimitMilli: bigint, memoryLimitBytes: bigint): LinuxResources {
  const shares = cpuRequestMilli === 0n && cpuLimitMilli !== 0n ? milliCpuToShares(cpuLimitMilli) : milliCpuToShares(cpuRequestMilli)
  return {
    cpuPeriod: String(CPU_PERIOD_US),
    cpuQuota: String(milliCpuToQuota(cpuLimitMilli)),
    cpuShares: String(shares),
    memoryLimitInBytes: String(memoryLimitBytes),
  }
}

/** A resource list's cpu (millicores) and memory (bytes); 0 for what it leaves out. */
export function resourceListValues(list: ResourceListModel): {cpuMilli: bigint; memoryBytes: bigint} {
  return {
    cpuMilli: list.cpu === undefined ? 0n : quantityMilliValue(parseQuantity(list.cpu)!),
    memoryBytes: list.memory === undefined ? 0n : quantityValue(parseQuantity(list.memory)!),
  }
}

/**
 * Pod totals as resourcehelper.PodRequests/PodLimits (without overhead): app containers add up, an
 * init container counts if it is bigger; pod-level resources (spec.resources), where set, replace them.
 */
export function podTotals(pod: PodModel): EffectiveResources {
  const total = containerTotals(pod)
  const level = pod.resources
  if (!level) return total
  const requests = resourceListValues(level.requests)
  const limits = resourceListValues(level.limits)
  if (level.requests.cpu !== undefined) total.cpuRequestMilli = requests.cpuMilli
  if (level.requests.memory !== undefined) total.memoryRequestBytes = requests.memoryBytes
  if (level.limits.cpu !== undefined) total.cpuLimitMilli = limits.cpuMilli
  if (level.limits.memory !== undefined) total.memoryLimitBytes = limits.memoryBytes
  return total
}

function containerTotals(pod: PodModel): EffectiveResources {
  const sum = (list: ContainerModel[]) =>
    list.map(effectiveResources).reduce(
      (total, r) => ({
        cpuRequestMilli: total.cpuRequestMilli + r.cpuRequestMilli,
        cpuLimitMilli: total.cpuLimitMilli + r.cpuLimitMilli,
        memoryRequestBytes: total.memoryRequestBytes + r.memoryRequestBytes,
        memoryLimitBytes: total.memoryLimitBytes + r.memoryLimitBytes,
      }),
      {cpuRequestMilli: 0n, cpuLimitMilli: 0n, memoryRequestBytes: 0n, memoryLimitBytes: 0n},
    )
  const total = sum(pod.containers)
  for (const init of pod.initContainers.map(effectiveResources)) {
    for (const key of Object.keys(total) as Array<keyof EffectiveResources>) {
      if (init[key] > total[key]) total[key] = init[key]
    }
  }

  return total
}

/** The sandbox's cgroup settings: the kubelet's calculateSandboxResources over the pod totals. */
export function sandboxResources(pod: PodModel): LinuxResources {
  const total = podTotals(pod)
  return linuxResources(total.cpuRequestMilli, total.cpuLimitMilli, total.memoryLimitBytes)
}

/** ComputePodQOS from pod-level resources (PodLevelResources): Guaranteed needs cpu and memory limits equal to the requests. */
function podLevelQosClass(level: NonNullable<PodModel['resources']>): QosClass {
  const keys = ['cpu', 'memory'] as const
  const requested = keys.filter((key) => level.requests[key] !== undefined)
  const limited = keys.filter((key) => level.limits[key] !== undefined)
  if (requested.length === 0 && limited.length === 0) return 'BestEffort'
  const requests = resourceListValues(level.requests)
  const limits = resourceListValues(level.limits)
  const equal = requests.cpuMilli === limits.cpuMilli && requests.memoryBytes === limits.memoryBytes
  return limited.length === 2 && requested.length === 2 && equal ? 'Guaranteed' : 'Burstable'
}

/** qos.GetPodQOS over cpu and memory; pod-level resources decide when the pod has them. */
export function podQosClass(pod: PodModel): QosClass {
  if (pod.resources) return podLevelQosClass(pod.resources)
  const all = [...pod.initContainers, ...pod.containers]
  let requests = {cpu: 0n, memory: 0n}
  let limits = {cpu: 0n, memory: 0n}
  let anyRequest = false
  let anyLimit = false
  let guaranteed = true
  for (const container of all) {
    const r = effectiveResources(container)
    requests = {cpu: requests.cpu + r.cpuRequestMilli, memory: requests.memory + r.memoryRequestBytes}
    limits = {cpu: limits.cpu + r.cpuLimitMilli, memory: limits.memory + r.memoryLimitBytes}
    anyRequest ||= r.cpuRequestMilli > 0n || r.memoryRequestBytes > 0n
    anyLimit ||= r.cpuLimitMilli > 0n || r.memoryLimitBytes > 0n
    if (r.cpuLimitMilli === 0n || r.memoryLimitBytes === 0n) guaranteed = false
  }

  if (!anyRequest && !anyLimit) return 'BestEffort'
  if (guaranteed && requests.cpu === limits.cpu && requests.memory === limits.memory) return 'Guaranteed'
  return 'Burstable'
}

/** qos.GetContainerOOMScoreAdjust: Guaranteed −997, BestEffort 1000, Burstable by memory request share. */
export function containerOomScoreAdj(pod: PodModel, container: ContainerModel, nodeMemoryBytes: number): number {
  const qos = podQosClass(pod)
  if (qos === 'Guaranteed') return GUARANTEED_OOM_SCORE_ADJ
  if (qos === 'BestEffort') return BEST_EFFORT_OOM_SCORE_ADJ
  const request = effectiveResources(container).memoryRequestBytes
  const capacity = BigInt(Math.max(1, Math.floor(nodeMemoryBytes)))
  const adjust = 1000n - (1000n * request) / capacity
  if (adjust < BigInt(1000 + GUARANTEED_OOM_SCORE_ADJ)) return 1000 + GUARANTEED_OOM_SCORE_ADJ
  if (adjust === BigInt(BEST_EFFORT_OOM_SCORE_ADJ)) return BEST_EFFORT_OOM_SCORE_ADJ - 1
  return Number(adjust)
}
