/** The line `pull` prints on stdout for each image. */
import {shortId} from '../kube/helpers.js'
import {formatGoDuration} from '../util/duration.js'
import type {EnsureImageResult} from './image-manager.js'

/** "Successfully pulled image "busybox:1.36" in 1.2s. Image size: 2 bytes. ID: 3f57d9401f8d4", or "… is already present …". */
export function pullSummary(requested: string, result: EnsureImageResult, noTrunc = false): string {
  const id = noTrunc ? result.imageRef : shortId(result.imageRef)
  if (!result.pulled) return `Image "${requested}" is already present (${result.policy}). ID: ${id}`
  const took = formatGoDuration(result.pullMs ?? 0)
  return `Successfully pulled image "${requested}" in ${took}. Image size: ${result.sizeBytes ?? 0} bytes. ID: ${id}`
}
