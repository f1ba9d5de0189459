/**
 * How full the image filesystem is, as the kubelet's image GC sees it (ImageFsStats): the runtime
 * names the filesystem (ImageFsInfo's mountpoint) and says what images use; capacity and free space
 * are those of the filesystem holding that mountpoint (statfs), so usage counts everything on it.
 */
import {statfs} from 'node:fs/promises'

import type {CriClient} from '../../cri/client.js'
import {RuntimeError} from '../../errors.js'

export interface ImageFsUsage {
  mountpoint: string
  capacityBytes: number
  availableBytes: number
  /** What the runtime says images use (ImageFsInfo usedBytes). */
  imageBytes: number
  /** The kubelet's usagePercent: 100 - available * 100 / capacity, truncated. */
  usagePercent: number
}

/** The kubelet's usage percent, available clamped to capacity. */
export function usagePercent(capacityBytes: number, availableBytes: number): number {
  const available = Math.min(availableBytes, capacityBytes)
  return 100 - Math.trunc((available * 100) / capacityBytes)
}

/** The kubelet's amountToFree: what brings usage down to the low threshold; 0 or less means nothing. */
export function bytesToFree(usage: Pick<ImageFsUsage, 'capacityBytes' | 'availableBytes'>, lowThresholdPercent: number): number {
  const available = Math.min(usage.availableBytes, usage.capacityBytes)
  return Math.trunc((usage.capacityBytes * (100 - lowThresholdPercent)) / 100) - available
}

export async function imageFsUsage(client: CriClient, signal?: AbortSignal): Promise<ImageFsUsage> {
  const {imageFilesystems} = await client.image('imageFsInfo', {}, {signal})
  const [filesystem] = imageFilesystems
  const mountpoint = filesystem?.fsId?.mountpoint
  if (!mountpoint)
    throw new RuntimeError('the runtime reports no image filesystem (ImageFsInfo is empty); image garbage collection needs one')
  const fs = await statfs(mountpoint).catch((error: Error) => {
    throw new RuntimeError(`cannot measure the image filesystem at ${mountpoint} (${error.message}); run podctl gc on the runtime's host`)
  })
  const capacityBytes = fs.blocks * fs.bsize
  // The kubelet's "invalid capacity 0 on image filesystem".
  if (capacityBytes <= 0) throw new RuntimeError(`the image filesystem at ${mountpoint} reports a capacity of 0`)
  const availableBytes = fs.bavail * fs.bsize
  const imageBytes = Number(filesystem.usedBytes?.value ?? 0)
  return {mountpoint, capacityBytes, availableBytes, imageBytes, usagePercent: usagePercent(capacityBytes, availableBytes)}
}
