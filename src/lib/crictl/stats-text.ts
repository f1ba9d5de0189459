/**
 * crictl v1.37's `stats` and `statsp` tables (container_stats.go, pod_stats.go): two samples
 * `--seconds` apart, rows in the order of the second list (sorted by ID), a row only for a
 * container (pod) in both samples and, unless -a, with CPU or memory in use; CPU % from the change
 * in usage over the change in time. The tabwriter table comes behind the clear-screen sequence crictl
 * always writes; and imagefsinfo's indexed lines. Sizes are go-units HumanSize (4 significant digits).
 */
import type {ContainerStats, FilesystemUsage, ImageFsInfoResponse, PodSandboxStats} from '../../generated/runtime/v1/api.js'
import {tabwrite} from './tabwriter.js'
import {crictlTruncate} from './lists.js'
import {goHumanSize} from './units.js'
import {CrictlError} from './session.js'

/** crictl's display.ClearScreen: erase the screen, cursor home. */
export const CLEAR_SCREEN = '\u001B[2J\u001B[H'

const big = (value: string | undefined) => BigInt(value || '0')

function cpuPercent(cpu: bigint, oldCpu: bigint, timestamp: string, oldTimestamp: string): number {
  if (cpu === 0n) return 0
  const duration = big(timestamp) - big(oldTimestamp)
  if (duration === 0n) throw new CrictlError('cpu stat is not updated during sample')
  return (Number(cpu - oldCpu) / Number(duration)) * 100
}

/** The stats table from the first and second samples. */
export function crictlStatsText(first: readonly ContainerStats[], second: readonly ContainerStats[], all: boolean): string {
  const old = new Map(first.map((stats) => [stats.attributes?.id ?? '', stats]))
  const rows = [['CONTAINER', 'NAME', 'CPU %', 'MEM', 'DISK', 'INODES', 'SWAP']]
  for (const stats of second) {
    const id = stats.attributes?.id ?? ''
    const cpu = big(stats.cpu?.usageCoreNanoSeconds?.value)
    const memory = big(stats.memory?.workingSetBytes?.value)
    if (!all && cpu === 0n && memory === 0n) continue
    const before = old.get(id)
    if (!before) continue
    const percent = cpuPercent(cpu, big(before.cpu?.usageCoreNanoSeconds?.value), stats.cpu?.timestamp ?? '0', before.cpu?.timestamp ?? '0')
    rows.push([
      crictlTruncate(id),
      stats.attributes?.metadata?.name ?? '',
      percent.toFixed(2),
      goHumanSize(memory),
      goHumanSize(big(stats.writableLayer?.usedBytes?.value)),
      String(big(stats.writableLayer?.inodesUsed?.value)),
      goHumanSize(big(stats.swap?.swapUsageBytes?.value)),
    ])
  }

  return CLEAR_SCREEN + tabwrite(rows)
}

function podUsage(stats: PodSandboxStats): {cpu: bigint; memory: bigint; timestamp: string} {
  const {linux, windows} = stats
  if (linux && windows)
    throw new CrictlError(
      `pod ${JSON.stringify(crictlTruncate(stats.attributes?.id ?? ''))} has both linux and windows stats which is not supported`,
    )
  const usage = linux ?? windows
  return {
    cpu: big(usage?.cpu?.usageCoreNanoSeconds?.value),
    memory: big(usage?.memory?.workingSetBytes?.value),
    timestamp: usage?.cpu?.timestamp ?? '0',
  }
}

/** The statsp table from the first and second samples. */
export function crictlPodStatsText(first: readonly PodSandboxStats[], second: readonly PodSandboxStats[]): string {
  const old = new Map(first.map((stats) => [stats.attributes?.id ?? '', stats]))
  const rows = [['POD', 'POD ID', 'CPU %', 'MEM']]
  for (const stats of second) {
    const id = stats.attributes?.id ?? ''
    const now = podUsage(stats)
    if (now.cpu === 0n && now.memory === 0n) continue
    const before = old.get(id)
    if (!before) continue
    const then = podUsage(before)
    rows.push([
      stats.attributes?.metadata?.name ?? '',
      crictlTruncate(id),
      cpuPercent(now.cpu, then.cpu, now.timestamp, then.timestamp).toFixed(2),
      goHumanSize(now.memory),
    ])
  }

  return CLEAR_SCREEN + tabwrite(rows)
}

/** `crictl imagefsinfo -o table`: container filesystems, then image filesystems, each value on its own indexed line. */
export function crictlFilesystemsText(status: ImageFsInfoResponse): string {
  const block = (label: string, filesystems: readonly FilesystemUsage[]) =>
    `${label} Filesystem \n` +
    filesystems
      .map(
        (usage, i) =>
          `TimeStamp[${i}]: ${usage.timestamp}\nDisk[${i}]: ${goHumanSize(usage.usedBytes?.value ?? 0)}\n` +
          `Inodes[${i}]: ${usage.inodesUsed?.value ?? 0}\nMountpoint[${i}]: ${usage.fsId?.mountpoint ?? ''}\n`,
      )
      .join('')
  return block('Container', status.containerFilesystems) + block('Image', status.imageFilesystems)
}
