/**
 * `podctl update`: new CPU and memory settings for created or running containers
 * (UpdateContainerResources), from crictl's flags and units (--cpu-period/--cpu-quota µs,
 * --cpu-shares, --cpuset-cpus/--cpuset-mems, --memory bytes) or Kubernetes quantities (--cpus 0.5,
 * --memory 256Mi). What is not asked for keeps the value the runtime reports for the container.
 */
import type {CriClient} from '../../cri/client.js'
import {UsageError} from '../../errors.js'
import {parseQuantity, quantityMilliValue, quantityValue} from '../../manifest/quantity.js'
import type {Container, LinuxContainerResources} from '../../../generated/runtime/v1/api.js'
import {containerName} from '../../kube/labels.js'

/** The flags as typed. */
export interface ResourceFlags {
  cpuPeriod?: string
  cpuQuota?: string
  cpuShares?: string
  cpusetCpus?: string
  cpusetMems?: string
  memory?: string
  cpus?: string
}

/** The fields to change, int64 as decimal strings (the CRI's JSON form). */
export type ResourceChanges = Partial<
  Pick<LinuxContainerResources, 'cpuPeriod' | 'cpuQuota' | 'cpuShares' | 'cpusetCpus' | 'cpusetMems' | 'memoryLimitInBytes'>
>

const DEFAULT_CPU_PERIOD_US = 100_000n
const CPUSET = /^\d+(-\d+)?(,\d+(-\d+)?)*$/

function integerFlag(flag: string, value: string, min: bigint): string {
  if (!/^-?\d+$/.test(value.trim())) throw new UsageError(`--${flag} "${value}" is not an integer`)
  const number = BigInt(value.trim())
  if (number < min) throw new UsageError(`--${flag} must be at least ${min}, not ${number}`)
  return String(number)
}

/** Bytes as crictl takes them (268435456), or a Kubernetes quantity (256Mi, 1G). */
function memoryBytes(value: string): string {
  const quantity = /^\d+$/.test(value.trim()) ? undefined : parseQuantity(value)
  const bytes = /^\d+$/.test(value.trim()) ? BigInt(value.trim()) : quantity && quantityValue(quantity)
  if (bytes === undefined) throw new UsageError(`--memory "${value}" is not a size; give bytes (268435456) or a quantity (256Mi, 1Gi)`)
  // runc refuses limits below its minimum, with a message less clear than this one.
  if (bytes < 4n * 1024n * 1024n) throw new UsageError(`--memory ${value} is below the runtime's minimum of 4Mi`)
  return String(bytes)
}

/** The flags → the fields to change; usage errors name the flag. Nothing asked for is an error too. */
export function resourceChanges(flags: ResourceFlags): ResourceChanges {
  const changes: ResourceChanges = {}
  if (flags.cpus !== undefined && flags.cpuQuota !== undefined) throw new UsageError('give either --cpus or --cpu-quota, not both')
  if (flags.cpuPeriod !== undefined) changes.cpuPeriod = integerFlag('cpu-period', flags.cpuPeriod, 1000n)
  if (flags.cpuQuota !== undefined) changes.cpuQuota = integerFlag('cpu-quota', flags.cpuQuota, -1n)
  if (flags.cpuShares !== undefined) changes.cpuShares = integerFlag('cpu-shares', flags.cpuShares, 2n)
  if (flags.cpus !== undefined) {
    const quantity = parseQuantity(flags.cpus)
    const milli = quantity && quantityMilliValue(quantity)
    if (milli === undefined || milli <= 0n) throw new UsageError(`--cpus "${flags.cpus}" is not a CPU amount; give e.g. 0.5, 2 or 500m`)
    const period = BigInt(changes.cpuPeriod ?? DEFAULT_CPU_PERIOD_US)
    changes.cpuPeriod = String(period)
    changes.cpuQuota = String((milli * period) / 1000n)
  }

  for (const [flag, key, value] of [
    ['cpuset-cpus', 'cpusetCpus', flags.cpusetCpus],
    ['cpuset-mems', 'cpusetMems', flags.cpusetMems],
  ] as const) {
    if (value === undefined) continue
    if (!CPUSET.test(value)) throw new UsageError(`--${flag} "${value}" is not a CPU list; give e.g. 0-3 or 0,2`)
    changes[key] = value
  }

  if (flags.memory !== undefined) changes.memoryLimitInBytes = memoryBytes(flags.memory)
  if (Object.keys(changes).length === 0) {
    throw new UsageError(
      'nothing to update; give --cpus, --memory, --cpu-period, --cpu-quota, --cpu-shares, --cpuset-cpus or --cpuset-mems',
    )
  }

  return changes
}

export interface UpdatedResult {
  containerId: string
  name: string
  /** What was sent: the container's current settings with the changes applied. */
  resources: Partial<LinuxContainerResources>
}

/**
 * UpdateContainerResources with the runtime's current settings (ContainerStatus.resources) and the
 * changes on top, so a runtime that replaces rather than merges keeps what was not asked for.
 */
export async function updateContainerResources(client: CriClient, container: Container, changes: ResourceChanges): Promise<UpdatedResult> {
  const {status} = await client.runtime('containerStatus', {containerId: container.id, verbose: false})
  const current = status?.resources?.linux
  const resources: Partial<LinuxContainerResources> = {
    ...(current
      ? {
          cpuPeriod: current.cpuPeriod,
          cpuQuota: current.cpuQuota,
          cpuShares: current.cpuShares,
          memoryLimitInBytes: current.memoryLimitInBytes,
          oomScoreAdj: current.oomScoreAdj,
          cpusetCpus: current.cpusetCpus,
          cpusetMems: current.cpusetMems,
        }
      : {}),
    ...changes,
  }
  await client.runtime('updateContainerResources', {containerId: container.id, linux: resources})
  return {containerId: container.id, name: containerName(container), resources}
}
