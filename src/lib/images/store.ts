/**
 * The local image store as users see it: one row per tag, docker-like filters, references
 * resolved from one ListImages (no ImageStatus per image), and the runtime's sandbox image. Pure
 * functions, plus at the end the call `images` makes (listImageRows), so commands never name an
 * RPC. What `rmi` removes and why is removal-plan.ts.
 */
import type {CriClient} from '../cri/client.js'
import {AmbiguousError, NotFoundError, UsageError} from '../errors.js'
import {nameMatcher} from '../util/filters.js'
import type {Image} from '../../generated/runtime/v1/api.js'
import {shortId} from '../kube/helpers.js'

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

/** listImages, then rows filtered as `images` shows them (one ListImages call). */
export async function listImageRows(client: CriClient, filters: ImageFilters): Promise<ImageRow[]> {
  const {images} = await client.image('listImages', {})
  return filterImageRows(imageRows(images), filters)
}
