/**
 * crictl v1.29's `stats`, `statsp` and `imagefsinfo -o table` text: tabwriter tables behind the
 * clear-screen sequence crictl always writes first (even without --watch, even into a pipe), and
 * imagefsinfo's indexed lines. Sizes are go-units HumanSize (4 significant digits).
 */
import type {FilesystemUsage, ImageFsInfoResponse} from '../../generated/runtime/v1/api.js'
import {tabwrite} from './tabwriter.js'
import {crictlTruncate} from './lists.js'
import {goHumanSize} from './units.js'

/** crictl's display.ClearScreen: erase the screen, cursor home. */
export const CLEAR_SCREEN = '\u001B[2J\u001B[H'

export interface CrictlContainerStatsRow {
  id: string
  name: string
  cpuPercent: number | null
  /** The CPU time so far: crictl skips a row whose CPU time and memory are both 0 (or unknown). */
  cpuUsageCoreNanoSeconds?: string | null
  memoryWorkingSetBytes: string | null
  writableLayerUsedBytes: string | null
  writableLayerInodesUsed: string | null
}

/**
 * crictl's rule (container_stats.go, pod_stats.go): a row with no CPU time and no memory is a container
 * that is not running (containerd reports zeros for it; CRI-O without a cgroup parent for every one)
 * and is not printed; `crictl stats -a` prints containers' rows anyway, `statsp` never.
 */
function withoutData(row: {cpuUsageCoreNanoSeconds?: string | null; memoryWorkingSetBytes: string | null}): boolean {
  return !Number(row.cpuUsageCoreNanoSeconds ?? 0) && !Number(row.memoryWorkingSetBytes ?? 0)
}

export function crictlStatsText(rows: readonly CrictlContainerStatsRow[], options: {all?: boolean} = {}): string {
  const table = [['CONTAINER', 'NAME', 'CPU %', 'MEM', 'DISK', 'INODES']]
  for (const row of rows) {
    if (!options.all && withoutData(row)) continue
    table.push([
      crictlTruncate(row.id),
      row.name,
      (row.cpuPercent ?? 0).toFixed(2),
      goHumanSize(row.memoryWorkingSetBytes ?? 0),
      goHumanSize(row.writableLayerUsedBytes ?? 0),
      row.writableLayerInodesUsed ?? '0',
    ])
  }

  return CLEAR_SCREEN + tabwrite(table)
}

export interface CrictlPodStatsRow {
  podName: string
  podSandboxId: string
  cpuPercent: number | null
  cpuUsageCoreNanoSeconds?: string | null
  memoryWorkingSetBytes: string | null
}

export function crictlPodStatsText(rows: readonly CrictlPodStatsRow[]): string {
  const table = [['POD', 'POD ID', 'CPU %', 'MEM']]
  for (const row of rows) {
    if (withoutData(row)) continue
    table.push([
      row.podName,
      crictlTruncate(row.podSandboxId),
      (row.cpuPercent ?? 0).toFixed(2),
      goHumanSize(row.memoryWorkingSetBytes ?? 0),
    ])
  }

  return CLEAR_SCREEN + tabwrite(table)
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
