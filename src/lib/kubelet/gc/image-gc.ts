/**
 * The kubelet's image GC (images/image_gc_manager.go): when the image filesystem is at the high
 * threshold or above, free what brings it down to the low threshold, removing images no container
 * uses (in any state), not the runtime's sandbox image (the kubelet always counts it in use) and
 * not pinned (containerd 2 pins the sandbox image too), first seen at
 * least MinAge ago, least recently used first (then first seen first), until enough is freed.
 */
import type {CriClient} from '../../cri/client.js'
import {NotFoundError} from '../../errors.js'
import type {Container, Image} from '../../../generated/runtime/v1/api.js'
import type {ImageRecord} from './image-records.js'
import type {ImageGcPolicy} from './policy.js'

export interface CollectedImage {
  id: string
  /** The image's first tag, else its first digest, else its ID (for people). */
  ref: string
  sizeBytes: number
}

/**
 * Whether any container (running or not) uses the image, or it is one of `alwaysInUse` (the sandbox
 * image): by ID, tag or digest, as the runtime reports them.
 */
export function imageUsage(containers: readonly Container[], alwaysInUse: readonly string[] = []): (image: Image) => boolean {
  const refs = new Set(
    [...alwaysInUse, ...containers.flatMap((container) => [container.imageRef, container.image?.image ?? ''])].filter(Boolean),
  )
  return (image) =>
    refs.has(image.id) || image.repoTags.some((tag) => refs.has(tag)) || image.repoDigests.some((digest) => refs.has(digest))
}

export interface CandidateContext extends Pick<ImageGcPolicy, 'minAgeMs'> {
  inUse: (image: Image) => boolean
  records: ReadonlyMap<string, ImageRecord>
  nowMs: number
}

/** The images GC may remove, in removal order. */
export function imageCandidates(images: readonly Image[], {inUse, records, minAgeMs, nowMs}: CandidateContext): Image[] {
  const recordOf = (image: Image) => records.get(image.id) ?? {firstDetectedMs: nowMs, lastUsedMs: 0}
  return images
    .filter((image) => !image.pinned && !inUse(image) && nowMs - recordOf(image).firstDetectedMs >= minAgeMs)
    .sort((a, b) => {
      const [x, y] = [recordOf(a), recordOf(b)]
      return x.lastUsedMs - y.lastUsedMs || x.firstDetectedMs - y.firstDetectedMs || a.id.localeCompare(b.id)
    })
}

/**
 * The kubelet's freeSpace loop: candidates in order, each removed (`remove` answers undefined when
 * it failed, and the loop goes on with the next) until what was freed reaches `bytes`.
 */
export async function freeSpace(
  candidates: readonly Image[],
  bytes: number,
  remove: (image: Image) => Promise<CollectedImage | undefined>,
): Promise<{removed: CollectedImage[]; freedBytes: number}> {
  const removed: CollectedImage[] = []
  let freedBytes = 0
  for (const image of candidates) {
    if (freedBytes >= bytes) break
    const done = await remove(image)
    if (!done) continue
    removed.push(done)
    freedBytes += done.sizeBytes
  }

  return {removed, freedBytes}
}

export function describeImage(image: Image): CollectedImage {
  return {id: image.id, ref: image.repoTags[0] ?? image.repoDigests[0] ?? image.id, sizeBytes: Number(image.size || 0)}
}

/** RemoveImage by ID (every tag of it goes); an image already gone counts as removed. */
export async function removeImage(client: CriClient, image: Image, signal?: AbortSignal): Promise<CollectedImage> {
  await client.image('removeImage', {image: {image: image.id}}, {signal}).catch((error: unknown) => {
    if (!(error instanceof NotFoundError)) throw error
  })
  return describeImage(image)
}
