/**
 * The node's allocatable, as the kubelet reports it with no --kube-reserved or --system-reserved
 * (pkg/kubelet/cm GetNodeAllocatableReservation, hardEvictionReservation; nodestatus MachineInfo):
 * capacity less what the default hard eviction thresholds (eviction/defaults_linux.go:
 * memory.available<100Mi, nodefs.available<10%) hold back, and memory less the huge pages. The
 * downward API gives it for a limit the container does not set (limits.memory, limits.cpu,
 * limits.ephemeral-storage).
 */
import {readdirSync, readFileSync} from 'node:fs'

export interface NodeAllocatable {
  cpuMilli: bigint
  memoryBytes: bigint
  ephemeralStorageBytes: bigint
}

export interface NodeCapacity {
  cpuMilli: bigint
  /** MemTotal. */
  memoryBytes: bigint
  /** Every huge page the kernel holds (all sizes): not memory a pod may use as such. */
  hugePagesBytes: bigint
  /** The size of the filesystem of the pod directories (nodefs). */
  ephemeralStorageBytes: bigint
}

/** memory.available<100Mi: the kubelet's default hard eviction threshold for memory. */
export const EVICTION_HARD_MEMORY_BYTES = 100n * 1024n * 1024n
/** nodefs.available<10%, a float32 in the kubelet's threshold (evictionapi.ThresholdValue.Percentage). */
export const EVICTION_HARD_NODEFS_FRACTION = Math.fround(0.1)

export function nodeAllocatable(capacity: NodeCapacity): NodeAllocatable {
  const atLeastZero = (value: bigint) => (value > 0n ? value : 0n)
  // GetThresholdQuantity: int64(float64(capacity) * float64(percentage)).
  const nodeFsReserved = BigInt(Math.trunc(Number(capacity.ephemeralStorageBytes) * EVICTION_HARD_NODEFS_FRACTION))
  return {
    cpuMilli: capacity.cpuMilli,
    memoryBytes: atLeastZero(capacity.memoryBytes - EVICTION_HARD_MEMORY_BYTES - capacity.hugePagesBytes),
    ephemeralStorageBytes: atLeastZero(capacity.ephemeralStorageBytes - nodeFsReserved),
  }
}

/** The huge pages of every size the kernel has set aside (/sys/kernel/mm/hugepages/hugepages-<size>kB/nr_hugepages). */
export function hugePagesBytes(root = '/sys/kernel/mm/hugepages'): bigint {
  let total = 0n
  let sizes: string[]
  try {
    sizes = readdirSync(root)
  } catch {
    return 0n
  }

  for (const name of sizes) {
    const kb = /^hugepages-(\d+)kB$/.exec(name)?.[1]
    if (!kb) continue
    try {
      total += BigInt(readFileSync(`${root}/${name}/nr_hugepages`, 'utf8').trim()) * BigInt(kb) * 1024n
    } catch {
      // A size that cannot be read holds none podctl can count.
    }
  }

  return total
}
