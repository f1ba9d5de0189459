/**
 * The kubelet's image GC (images/image_gc_manager.go), on images podctl pulled on this runtime only
 * (images/pull-records.ts): when the image filesystem is at the high threshold or above, free what
 * brings it down to the low threshold, removing images podctl pulled that no container of any tool
 * uses (in any state), not the runtime's sandbox image (the kubelet always counts it in use) and
 * not pinned (containerd 2 pins the sandbox image too), first seen at least MinAge ago, least
 * recently used first (then first seen first), until enough is freed. An image crictl, a kubelet
 * or a user pulled is never removed, however old and unused.
 */
import type {CriClient} from '../../cri/client.js'
import {NotFoundError} from '../../errors.js'
import type {Container, Image} from '../../../generated/runtime/v1/api.js'
import {isPullOf, type PullRecord, PullRecords, pullRecordsDir} from '../../images/pull-records.js'
import {runtimeSandboxImage} from '../../images/sandbox-image.js'
import {bytesToFree, imageFsUsage, type ImageFsUsage} from './image-fs.js'
import {type ImageRecord, ImageRecords} from './image-records.js'
import {imageGcEnabled, type ImageGcPolicy} from './policy.js'
import {type GcRound, removeDecided} from './round.js'

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
  /** The pulls podctl recorded on this runtime: only their images may go. */
  pulls: readonly PullRecord[]
  nowMs: number
}

/** Whether podctl pulled the image on this runtime. */
export function pulledByPodctl(pulls: readonly PullRecord[]): (image: Image) => boolean {
  return (image) => pulls.some((pull) => isPullOf(pull, image))
}

/** The images GC may remove, in removal order. */
export function imageCandidates(images: readonly Image[], {inUse, records, pulls, minAgeMs, nowMs}: CandidateContext): Image[] {
  const recordOf = (image: Image) => records.get(image.id) ?? {firstDetectedMs: nowMs, lastUsedMs: 0}
  const ours = pulledByPodctl(pulls)
  return images
    .filter((image) => ours(image) && !image.pinned && !inUse(image) && nowMs - recordOf(image).firstDetectedMs >= minAgeMs)
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

export interface ImageGcResult {
  /** False when the high threshold is 100 or the round skipped images. */
  ran: boolean
  highThresholdPercent: number
  lowThresholdPercent: number
  usageBefore?: ImageFsUsage
  usageAfter?: ImageFsUsage
  /** What reaching the low threshold needed (0 when usage is below the high threshold). */
  bytesToFree: number
  freedBytes: number
  removed: CollectedImage[]
}

export interface ImageRoundOptions {
  /** Run image GC in this round (a supervisor does every ImageGCPeriod); default true. */
  images?: boolean
  /** First-seen and last-used times of images; default memory only. */
  imageRecords?: ImageRecords
}

/** The round's image step: past the high threshold, podctl's unused images, least recently used first, until the low one. */
export async function collectImages(round: GcRound, policy: ImageGcPolicy, options: ImageRoundOptions): Promise<ImageGcResult> {
  const result: ImageGcResult = {
    ran: false,
    highThresholdPercent: policy.highThresholdPercent,
    lowThresholdPercent: policy.lowThresholdPercent,
    bytesToFree: 0,
    freedBytes: 0,
    removed: [],
  }
  if (!imageGcEnabled(policy) || options.images === false) return result
  result.ran = true
  const {client, signal} = round
  const pulls = new PullRecords(pullRecordsDir(round.podDirRoot, client.runtimeEndpoint))
  const listedMs = Date.now()
  // Containers listed again, just before deciding: one created since the round began keeps its image too.
  const [{images}, {containers}, status] = await Promise.all([
    client.image('listImages', {}, {signal}),
    client.runtime('listContainers', {filter: {}}, {signal}),
    client.runtime('status', {verbose: true}, {signal}).catch(() => undefined),
  ])
  const sandboxImage = await runtimeSandboxImage(client, status?.info)
  const inUse = imageUsage(containers, sandboxImage ? [sandboxImage] : [])
  const records = options.imageRecords ?? new ImageRecords()
  const known = await records.detect(images, inUse, round.nowMs)
  if (!round.dryRun) await Promise.all([records.save(), pulls.forgetGone(images, listedMs)])
  result.usageBefore = await imageFsUsage(client, signal)
  if (result.usageBefore.usagePercent < policy.highThresholdPercent) return result
  result.bytesToFree = Math.max(0, bytesToFree(result.usageBefore, policy.lowThresholdPercent))
  const context = {inUse, records: known, pulls: await pulls.read(), minAgeMs: policy.minAgeMs, nowMs: round.nowMs}
  explainForeignImages(round, images, context)
  const remove = async (image: Image) => {
    const described = describeImage(image)
    const why = 'pulled by podctl on this runtime; no container uses it, not pinned, older than the minimum age (least recently used first)'
    const decided = {kind: 'image' as const, object: described.ref, why, failureName: `image ${described.ref}`}
    return (await removeDecided(round, decided, () => removeImage(client, image, signal))) ? described : undefined
  }

  Object.assign(result, await freeSpace(imageCandidates(images, context), result.bytesToFree, remove))
  if (!round.dryRun && result.removed.length > 0) result.usageAfter = await imageFsUsage(client, signal)
  return result
}

/** Unused, unpinned images podctl did not pull: what the kubelet's image GC could take, counted as left alone. */
function explainForeignImages(round: GcRound, images: readonly Image[], context: CandidateContext): void {
  const ours = pulledByPodctl(context.pulls)
  for (const image of images) {
    if (!ours(image) && !image.pinned && !context.inUse(image)) round.explanation.leftAlone('image', 'not pulled by podctl on this runtime')
  }
}
