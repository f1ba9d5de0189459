/**
 * The local image store as users see it: one row per tag, docker-like filters, references
 * resolved from one ListImages (no ImageStatus per image), and what `rmi` will remove and why.
 * Pure functions, plus at the end the few that make the calls (listImageRows, planImageRemoval,
 * removeImages), so commands never name an RPC.
 */
import type {CriClient} from '../cri/client.js'
import {AmbiguousError, ExitCode, NotFoundError, PodctlError, UsageError} from '../errors.js'
import {settleLimit} from '../util/concurrency.js'
import {nameMatcher} from '../util/filters.js'
import type {Container, Image} from '../../generated/runtime/v1/api.js'
import {containerName} from '../kube/labels.js'
import {shortId} from '../kube/helpers.js'
import {runtimeSandboxImage} from './sandbox-image.js'

export const NONE = '<none>'

/** `host:5000/a/b:tag` → [`host:5000/a/b`, `tag`]; the tag is after the last ":" that follows the last "/". */
export function splitRepoTag(ref: string): [repository: string, tag: string] {
  const at = ref.indexOf('@')
  const name = at === -1 ? ref : ref.slice(0, at)
  const colon = name.lastIndexOf(':')
  if (colon > name.lastIndexOf('/')) return [name.slice(0, colon), name.slice(colon + 1)]
  return [name, '']
}

/** `repo@sha256:…` → [`repo`, `sha256:…`]. */
export function splitRepoDigest(ref: string): [repository: string, digest: string] {
  const at = ref.indexOf('@')
  return at === -1 ? [ref, ''] : [ref.slice(0, at), ref.slice(at + 1)]
}

/**
 * The names docker users type for a reference: `docker.io/library/busybox` is also `busybox`,
 * `docker.io/me/app` is also `me/app`. Used to match, never to rewrite what is shown.
 */
export function familiarNames(repository: string): string[] {
  if (repository.startsWith('docker.io/library/')) return [repository, repository.slice('docker.io/library/'.length)]
  if (repository.startsWith('docker.io/')) return [repository, repository.slice('docker.io/'.length)]
  return [repository]
}

export interface ImageRow {
  image: Image
  repository: string
  tag: string
  /** The repo digest of this row's repository (else the image's first), `''` when it has none. */
  digest: string
}

/** One row per tag; an image without tags is one `<none>` row named after its first repo digest. */
export function imageRows(images: readonly Image[]): ImageRow[] {
  const rows: ImageRow[] = []
  for (const image of images) {
    const digests = image.repoDigests.map(splitRepoDigest)
    const digestFor = (repository: string) => (digests.find(([repo]) => repo === repository) ?? digests[0])?.[1] ?? ''
    if (image.repoTags.length === 0) {
      const repository = digests[0]?.[0] || NONE
      rows.push({image, repository, tag: NONE, digest: digestFor(repository)})
      continue
    }

    for (const repoTag of image.repoTags) {
      const [repository, tag] = splitRepoTag(repoTag)
      rows.push({image, repository, tag: tag || NONE, digest: digestFor(repository)})
    }
  }

  // Tagged rows by name, then untagged ones; the ID breaks ties so the order is stable.
  return rows.sort(
    (a, b) =>
      Number(a.repository === NONE) - Number(b.repository === NONE) ||
      Number(a.tag === NONE) - Number(b.tag === NONE) ||
      a.repository.localeCompare(b.repository) ||
      a.tag.localeCompare(b.tag) ||
      a.image.id.localeCompare(b.image.id),
  )
}

export interface ImageFilters {
  /** true: only images without tags; false: only images with at least one. */
  dangling?: boolean
  /** `reference=` patterns (exact or `*` globs on repo or repo:tag); a row matching any of them is kept. */
  references: string[]
  /** The positional `REPOSITORY[:TAG]` (exact or glob). */
  repository?: string
}

/** `--filter dangling=true --filter reference='*busybox*'` → ImageFilters; unknown keys are usage errors. */
export function parseImageFilters(values: readonly string[] | undefined, repository?: string): ImageFilters {
  const filters: ImageFilters = {references: [], repository: repository || undefined}
  for (const value of values ?? []) {
    const eq = value.indexOf('=')
    const key = eq > 0 ? value.slice(0, eq).trim() : ''
    const arg = eq > 0 ? value.slice(eq + 1).trim() : ''
    if (key === 'dangling') {
      if (arg !== 'true' && arg !== 'false') throw new UsageError(`--filter "${value}": dangling must be true or false`)
      filters.dangling = arg === 'true'
    } else if (key === 'reference') {
      if (arg === '') throw new UsageError(`--filter "${value}": give a pattern, e.g. reference='*busybox*'`)
      filters.references.push(arg)
    } else {
      throw new UsageError(`--filter "${value}" is not supported; use dangling=true|false or reference=PATTERN`)
    }
  }

  return filters
}

/** The strings a row answers to: repo, repo:tag (also in docker's short form), repo@digest. */
function rowNames(row: ImageRow): string[] {
  const names: string[] = []
  if (row.repository !== NONE) {
    for (const repository of familiarNames(row.repository)) {
      names.push(repository)
      if (row.tag !== NONE) names.push(`${repository}:${row.tag}`)
      if (row.digest) names.push(`${repository}@${row.digest}`)
    }
  }

  return names
}

export function filterImageRows(rows: readonly ImageRow[], filters: ImageFilters): ImageRow[] {
  const references = filters.references.map((pattern) => nameMatcher(pattern))
  const repository = filters.repository === undefined ? undefined : nameMatcher(filters.repository)
  return rows.filter((row) => {
    if (filters.dangling !== undefined && (row.image.repoTags.length === 0) !== filters.dangling) return false
    const names = rowNames(row)
    if (references.length > 0 && !references.some((match) => names.some(match))) return false
    if (repository && !names.some(repository)) return false
    return true
  })
}

/** The distinct images behind some rows, in row order (for -q and JSON). */
export function imagesOf(rows: readonly ImageRow[]): Image[] {
  const seen = new Map<string, Image>()
  for (const row of rows) if (!seen.has(row.image.id)) seen.set(row.image.id, row.image)
  return [...seen.values()]
}

/** Short image label for messages: first tag, else first digest, else the short ID. */
export function imageLabel(image: Image): string {
  return image.repoTags[0] ?? image.repoDigests[0] ?? shortId(image.id)
}

/**
 * An image from what a user typed: a tag (`repo:tag`, `repo` meaning `:latest`, docker's short
 * names), a digest reference (`repo@sha256:…`), or an image ID / ID prefix (with or without
 * `sha256:`). An ID prefix matching several images is an error listing them.
 */
export function resolveImage(images: readonly Image[], ref: string): Image {
  const wanted = ref.trim()
  if (wanted === '') throw new UsageError('image reference is empty; give a tag, digest or image ID prefix')
  const [repository, tag] = splitRepoTag(wanted)
  const [, digest] = splitRepoDigest(wanted)
  const byName = images.find((image) => {
    if (digest) {
      return image.repoDigests.some((rd) => {
        const [repo, d] = splitRepoDigest(rd)
        return d === digest && familiarNames(repo).includes(repository)
      })
    }

    return image.repoTags.some((rt) => {
      const [repo, t] = splitRepoTag(rt)
      return t === (tag || 'latest') && familiarNames(repo).includes(repository)
    })
  })
  if (byName) return byName
  const byId = images.find((image) => image.id === wanted)
  if (byId) return byId

  const hex = wanted.replace(/^sha256:/, '')
  if (/^[a-f0-9]+$/.test(hex)) {
    const matches = images.filter((image) => image.id.replace(/^sha256:/, '').startsWith(hex))
    if (matches.length === 1) return matches[0]
    if (matches.length > 1) {
      const list = matches.map((image) => `${shortId(image.id)} (${imageLabel(image)})`).join(', ')
      throw new AmbiguousError(`image ID prefix "${wanted}" matches ${matches.length} images: ${list}; give more characters`)
    }
  }

  throw new NotFoundError(`image "${wanted}" not found; list images with: podctl images`)
}

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

  if (request.prune) {
    for (const image of images) if (!isPinned(image) && containersUsing(image, containers).length === 0) add(image)
  } else if (request.all) {
    for (const image of images) add(image)
  }

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

  return {remove, failures}
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

/** listImages, then rows filtered as `images` shows them (one ListImages call). */
export async function listImageRows(client: CriClient, filters: ImageFilters): Promise<ImageRow[]> {
  const {images} = await client.image('listImages', {})
  return filterImageRows(imageRows(images), filters)
}

/**
 * What `rmi` removes, from one ListImages, one ListContainers (any state) and the runtime's
 * verbose Status, concurrently. Status is asked only for the sandbox image: a runtime that cannot
 * answer simply protects nothing extra.
 */
export async function planImageRemoval(client: CriClient, request: Omit<RemovalRequest, 'protectedRefs'>): Promise<RemovalPlan> {
  const [{images}, {containers}, status] = await Promise.all([
    client.image('listImages', {}),
    client.runtime('listContainers', {}),
    client.runtime('status', {verbose: true}).catch(() => undefined),
  ])
  const sandboxImage = await runtimeSandboxImage(client, status?.info)
  return planRemoval(images, containers, {...request, protectedRefs: sandboxImage ? [sandboxImage] : []})
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
