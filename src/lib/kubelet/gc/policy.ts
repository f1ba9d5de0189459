/**
 * What garbage collection keeps and when it frees disk: the kubelet's ContainerGCPolicy and
 * ImageGCPolicy with their documented defaults, and the check of the image thresholds.
 */
import {UsageError} from '../../errors.js'

/** The kubelet's ContainerGCPeriod: one container collection a minute. */
export const CONTAINER_GC_PERIOD_MS = 60_000
/** The kubelet's ImageGCPeriod: images are looked at every 5 minutes. */
export const IMAGE_GC_PERIOD_MS = 5 * 60_000

export interface ContainerGcPolicy {
  /** MinAge (--minimum-container-ttl-duration): a dead container younger than this stays. Default 0. */
  minAgeMs: number
  /** MaxPerPodContainer (--maximum-dead-containers-per-container): dead instances kept per pod and container name. Default 1. */
  maxPerPodContainer: number
}

export interface ImageGcPolicy {
  /** --image-gc-high-threshold: at this image filesystem usage (percent) or above, images are removed. 100 turns image GC off. */
  highThresholdPercent: number
  /** --image-gc-low-threshold: removal stops once usage would be down to this percent. */
  lowThresholdPercent: number
  /** --minimum-image-ttl-duration: an unused image first seen less than this ago stays. */
  minAgeMs: number
}

export const DEFAULT_CONTAINER_GC_POLICY: ContainerGcPolicy = {minAgeMs: 0, maxPerPodContainer: 1}
export const DEFAULT_IMAGE_GC_POLICY: ImageGcPolicy = {highThresholdPercent: 85, lowThresholdPercent: 80, minAgeMs: 2 * 60_000}

/** The kubelet turns image GC off when the high threshold is 100 (and no maximum age is set, which podctl has not). */
export function imageGcEnabled(policy: ImageGcPolicy): boolean {
  return policy.highThresholdPercent < 100
}

/** The kubelet's validation: both thresholds within 0..100, low below high. Names the flags, as users set them. */
export function validateImageGcPolicy(policy: ImageGcPolicy): ImageGcPolicy {
  for (const [flag, value] of [
    ['--image-gc-high-threshold', policy.highThresholdPercent],
    ['--image-gc-low-threshold', policy.lowThresholdPercent],
  ] as const) {
    if (!Number.isInteger(value) || value < 0 || value > 100) throw new UsageError(`${flag} ${value} is not a percentage; use 0 to 100`)
  }

  if (policy.lowThresholdPercent >= policy.highThresholdPercent)
    throw new UsageError(
      `--image-gc-low-threshold ${policy.lowThresholdPercent} must be below --image-gc-high-threshold ${policy.highThresholdPercent}; ` +
        'lower the low threshold or raise the high one',
    )
  return policy
}
