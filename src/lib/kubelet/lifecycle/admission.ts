/**
 * The kubelet's pod admission before SyncPod (lifecycle/predicate.go, the scheduler's
 * noderesources fit): a pod whose requests do not fit in the node's allocatable CPU and memory is
 * rejected as OutOfcpu / OutOfmemory with the kubelet's message. What the runtime must support for
 * a pod is checked in runtime-support.ts.
 */
import {podFullName} from '../../kube/helpers.js'
import type {PodModel} from '../../manifest/model.js'
import {PodFailedError} from '../core/reasons.js'
import {podTotals, resourceListValues} from '../core/resources.js'

/** The node as admission sees it: allocatable = capacity here (no system or kube reservations on a podctl node). */
export interface NodeAllocatable {
  /** Cores (os.cpus().length). */
  cpus: number
  memoryBytes: number
}

export interface PodRequests {
  cpuMilli: bigint
  memoryBytes: bigint
}

/** resourcehelper.PodRequests: max(sum of app containers, largest init container), pod-level resources where set, plus overhead. */
export function podRequests(pod: PodModel): PodRequests {
  const total = podTotals(pod)
  const overhead = pod.overhead ? resourceListValues(pod.overhead) : {cpuMilli: 0n, memoryBytes: 0n}
  return {cpuMilli: total.cpuRequestMilli + overhead.cpuMilli, memoryBytes: total.memoryRequestBytes + overhead.memoryBytes}
}

export interface AdmissionVerdict {
  admitted: boolean
  /** OutOfcpu or OutOfmemory when refused. */
  reason?: string
  /** The kubelet's message ("Pod was rejected: Node didn't have enough resource: ..."). */
  message?: string
  requested: {cpu: string; memory: string}
  used: {cpu: string; memory: string}
  allocatable: {cpu: string; memory: string}
}

/**
 * Admits the pods of one run in order, each against what the ones before it requested (podctl
 * does not read back the requests of pods started by earlier runs). CPU in millicores, memory in
 * bytes, as the kubelet prints them.
 */
export function admitPods(pods: readonly PodModel[], node: NodeAllocatable): AdmissionVerdict[] {
  const capacity = {cpu: BigInt(node.cpus) * 1000n, memory: BigInt(Math.floor(node.memoryBytes))}
  const used = {cpu: 0n, memory: 0n}
  return pods.map((pod) => {
    const requests = podRequests(pod)
    const verdict: AdmissionVerdict = {
      admitted: true,
      requested: {cpu: `${requests.cpuMilli}m`, memory: String(requests.memoryBytes)},
      used: {cpu: `${used.cpu}m`, memory: String(used.memory)},
      allocatable: {cpu: `${capacity.cpu}m`, memory: String(capacity.memory)},
    }
    const short: Array<['cpu' | 'memory', bigint, bigint, bigint]> = [
      ['cpu', requests.cpuMilli, used.cpu, capacity.cpu],
      ['memory', requests.memoryBytes, used.memory, capacity.memory],
    ]
    const failing = short.find(([, requested, inUse, total]) => requested > 0n && requested + inUse > total)
    if (failing) {
      const [name, requested, inUse, total] = failing
      verdict.admitted = false
      verdict.reason = `OutOf${name}`
      const numbers = `requested: ${requested}, used: ${inUse}, capacity: ${total}`
      verdict.message = `Pod was rejected: Node didn't have enough resource: ${name}, ${numbers}`
      return verdict
    }

    used.cpu += requests.cpuMilli
    used.memory += requests.memoryBytes
    return verdict
  })
}

/** admitPods, refusing the run (exit 14, nothing created) at the first pod that does not fit. */
export function checkAdmission(pods: readonly PodModel[], node: NodeAllocatable): void {
  const verdicts = admitPods(pods, node)
  for (const [index, verdict] of verdicts.entries()) {
    if (verdict.admitted) continue
    const pod = pods[index]
    throw new PodFailedError(
      `pod ${podFullName(pod.name, pod.namespace)}: ${verdict.reason}: ${verdict.message} (--skip-admission runs it anyway)`,
      {
        reason: verdict.reason,
      },
    )
  }
}
