/**
 * What `rmi` removes and why (a CRI RemoveImage removes a whole image with all its tags): the
 * plan from one ListImages, one ListContainers and the runtime's status, the refusals (an image in
 * use, a pinned one), and the removals, a few at once, so commands never name an RPC. As podctl,
 * --all and --prune take only images podctl pulled on this runtime (pull-records.ts).
 */
import type {CriClient} from '../cri/client.js'
import {ExitCode, PodctlError} from '../errors.js'
import {settleLimit} from '../util/concurrency.js'
import type {Container, Image} from '../../generated/runtime/v1/api.js'
import {containerName} from '../kube/labels.js'
import {shortId} from '../kube/helpers.js'
import {isPullOf, type PullRecord, PullRecords, pullRecordsDir} from './pull-records.js'
import {runtimeSandboxImage} from './sandbox-image.js'
import {familiarNames, imageLabel, resolveImage, splitRepoTag} from './store.js'

/** Containers (any state) whose image is this one, by ID, ref, digest or tag. */
export function containersUsing(image: Image, containers: readonly Container[]): Container[] {
  const names = new Set([image.id, ...image.repoTags, ...image.repoDigests])
  return containers.filter(
    (c) =>
      names.has(c.imageRef) ||
      (c.imageId !== '' && names.has(c.imageId)) ||
      (c.image !== undefined && (names.has(c.image.image) || names.has(c.image.userSpecifiedImage))),
  )
}

/** Refused because a container uses the image; --force overrides. */
export class ImageInUseError extends PodctlError {
  constructor(message: string) {
    super('ImageInUse', ExitCode.USAGE, message)
  }
}

/** Refused because the runtime pins the image (its sandbox image, for one); --force overrides. */
export class ImagePinnedError extends PodctlError {
  constructor(message: string) {
    super('ImagePinned', ExitCode.USAGE, message)
  }
}

export interface RemovalTarget {
  image: Image
  /** What the user typed that led here (empty for --all/--prune). */
  requestedAs: string[]
  usedBy: Container[]
}

export interface RemovalFailure {
  /** What the user typed, or the image label. */
  ref: string
  error: PodctlError
}

export interface RemovalPlan {
  remove: RemovalTarget[]
  failures: RemovalFailure[]
  /** With `onlyPulledBy`: how many images --all or --prune matched that podctl did not pull (absent when none). */
  leftAlone?: number
}

export interface RemovalRequest {
  refs?: readonly string[]
  /** Every image (still refusing in-use and pinned ones without force). */
  all?: boolean
  /** Images no container uses and the runtime does not pin. */
  prune?: boolean
  force?: boolean
  /** Images the runtime needs though no container shows it, e.g. its sandbox (pause) image. */
  protectedRefs?: readonly string[]
  /**
   * podctl's pulls on this runtime (pull-records.ts): --all and --prune then take only their images,
   * never one crictl, a kubelet or a user pulled. A named image is the user's call. None: every image (crictl's rmi).
   */
  onlyPulledBy?: readonly PullRecord[]
}

/**
 * Decides what `rmi` removes. A CRI RemoveImage removes an image with all its tags, so targets
 * are whole images (deduplicated by ID); bad references and refusals are failures that never
 * stop the other removals.
 */
export function planRemoval(images: readonly Image[], containers: readonly Container[], request: RemovalRequest): RemovalPlan {
  const protectedIds = new Set<string>()
  for (const ref of request.protectedRefs ?? []) {
    try {
      protectedIds.add(resolveImage(images, ref).id)
    } catch {
      // A protected reference that is not present protects nothing.
    }
  }

  const isPinned = (image: Image) => image.pinned || protectedIds.has(image.id)
  const targets = new Map<string, RemovalTarget>()
  const failures: RemovalFailure[] = []
  const add = (image: Image, requestedAs?: string) => {
    const target = targets.get(image.id) ?? {image, requestedAs: [], usedBy: containersUsing(image, containers)}
    if (requestedAs !== undefined) target.requestedAs.push(requestedAs)
    targets.set(image.id, target)
  }

  const pulls = request.onlyPulledBy
  const bulk = pulls ? images.filter((image) => pulls.some((pull) => isPullOf(pull, image))) : images
  if (request.prune) {
    for (const image of bulk) if (!isPinned(image) && containersUsing(image, containers).length === 0) add(image)
  } else if (request.all) {
    for (const image of bulk) add(image)
  }

  const unused = (list: readonly Image[]) =>
    request.all ? list.length : list.filter((image) => !isPinned(image) && containersUsing(image, containers).length === 0).length
  const leftAlone = request.all || request.prune ? unused(images) - unused(bulk) : 0

  for (const ref of request.refs ?? []) {
    try {
      add(resolveImage(images, ref), ref)
    } catch (error) {
      failures.push({ref, error: error as PodctlError})
    }
  }

  const remove: RemovalTarget[] = []
  for (const target of targets.values()) {
    const refusal = request.force ? undefined : refusalFor(target, isPinned(target.image))
    if (refusal) failures.push({ref: target.requestedAs[0] ?? imageLabel(target.image), error: refusal})
    else remove.push(target)
  }

  return {remove, failures, ...(leftAlone > 0 ? {leftAlone} : {})}
}

function refusalFor(target: RemovalTarget, pinned: boolean): PodctlError | undefined {
  const label = target.requestedAs[0] ?? imageLabel(target.image)
  if (target.usedBy.length > 0) {
    const users = target.usedBy.map((c) => `${containerName(c) || '?'} (${shortId(c.id)})`).join(', ')
    const noun = target.usedBy.length === 1 ? 'container' : `${target.usedBy.length} containers`
    return new ImageInUseError(`image ${label} is used by ${noun}: ${users}; remove them first or pass --force`)
  }

  if (pinned) {
    return new ImagePinnedError(`image ${label} is pinned by the runtime (e.g. its sandbox image); pass --force to remove it anyway`)
  }

  return undefined
}

/** What a removal deletes, as `Deleted:` lines: every tag, else every digest, else the ID. */
export function removedNames(image: Image): string[] {
  if (image.repoTags.length > 0) return [...image.repoTags]
  if (image.repoDigests.length > 0) return [...image.repoDigests]
  return [image.id]
}

/** Tags that go too although the user named another tag of the same image (said before removing). */
export function collateralTags(target: RemovalTarget): string[] {
  if (target.requestedAs.length === 0) return []
  const named = new Set<string>()
  for (const ref of target.requestedAs) {
    for (const tag of target.image.repoTags) {
      const [repo, t] = splitRepoTag(tag)
      const [wantRepo, wantTag] = splitRepoTag(ref)
      if (t === (wantTag || 'latest') && familiarNames(repo).includes(wantRepo)) named.add(tag)
    }
  }

  // Named by ID or digest: the user meant the whole image.
  if (named.size === 0) return []
  return target.image.repoTags.filter((tag) => !named.has(tag))
}

/**
 * What `rmi` removes, from one ListImages, one ListContainers (any state) and the runtime's
 * verbose Status, concurrently. Status is asked only for the sandbox image: a runtime that cannot
 * answer simply protects nothing extra.
 */
export async function planImageRemoval(
  client: CriClient,
  request: Omit<RemovalRequest, 'protectedRefs' | 'onlyPulledBy'>,
  options: {
    /** The pod directory root whose pull records (pull-records.ts) limit --all and --prune to podctl's pulls; none: every image. */
    pullRecordsIn?: string
  } = {},
): Promise<RemovalPlan> {
  const records =
    options.pullRecordsIn === undefined ? undefined : new PullRecords(pullRecordsDir(options.pullRecordsIn, client.runtimeEndpoint))
  const [{images}, {containers}, status, onlyPulledBy] = await Promise.all([
    client.image('listImages', {}),
    client.runtime('listContainers', {}),
    client.runtime('status', {verbose: true}).catch(() => undefined),
    records?.read(),
  ])
  const sandboxImage = await runtimeSandboxImage(client, status?.info)
  return planRemoval(images, containers, {...request, protectedRefs: sandboxImage ? [sandboxImage] : [], onlyPulledBy})
}

/** At most this many RemoveImage calls in flight. */
export const REMOVE_CONCURRENCY = 4

export interface RemovalOutcome {
  target: RemovalTarget
  removed: boolean
  /** Why RemoveImage failed, as thrown (the command maps it to what users see). */
  error?: unknown
}

/** One RemoveImage per planned image, a few at once; one failure never stops the others. Outcomes in plan order. */
export async function removeImages(client: CriClient, plan: RemovalPlan): Promise<RemovalOutcome[]> {
  const settled = await settleLimit(plan.remove, REMOVE_CONCURRENCY, (target) =>
    client.image('removeImage', {image: {image: target.image.id}}),
  )
  return settled.map((outcome, index) =>
    outcome.status === 'fulfilled'
      ? {target: plan.remove[index], removed: true}
      : {target: plan.remove[index], removed: false, error: outcome.reason as unknown},
  )
}
