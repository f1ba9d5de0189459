/**
 * crictl v1.29's `pods`, `ps` and `images` as it prints them: its filters (names and namespaces as
 * unanchored Go regexps, pod and container IDs sent to the runtime, --image compared by image ID),
 * its sort (newest first), its columns and tabwriter layout, and its -v blocks. Pure functions
 * over the CRI lists; the commands make the calls.
 */
import type {Container, Image, PodSandbox} from '../../generated/runtime/v1/api.js'
import {humanAge} from '../output/format.js'
import {PodLabel} from '../kube/labels.js'
import {regexMatcher} from './regex.js'
import {tabwrite} from './tabwriter.js'
import {goHumanSize, goTimeString} from './units.js'

const TRUNCATED_ID_LENGTH = 13

/** crictl's getTruncatedID: drop `prefix`, keep 13 characters. */
export function crictlTruncate(id: string, prefix = ''): string {
  const rest = id.startsWith(prefix) ? id.slice(prefix.length) : id
  return rest.slice(0, TRUNCATED_ID_LENGTH)
}

export interface CrictlListOptions {
  quiet?: boolean
  verbose?: boolean
  noTrunc?: boolean
  latest?: boolean
  last?: number
  now?: number
}

/** Newest first (crictl sorts by CreatedAt, descending), then --latest / --last N (0: all). */
function newestSlice<T extends {createdAt: string}>(items: T[], options: CrictlListOptions): T[] {
  const sorted = [...items].sort((a, b) => {
    const [x, y] = [BigInt(a.createdAt || '0'), BigInt(b.createdAt || '0')]
    return x === y ? 0 : x > y ? -1 : 1
  })
  let count = sorted.length
  if (options.latest) count = 1
  if (options.last !== undefined && options.last > 0) count = options.last
  return sorted.slice(0, count)
}

export function crictlSelectPods(
  sandboxes: readonly PodSandbox[],
  filters: CrictlListOptions & {name?: string; namespace?: string},
): PodSandbox[] {
  const name = regexMatcher(filters.name, '--name')
  const namespace = regexMatcher(filters.namespace, '--namespace')
  return newestSlice(
    sandboxes.filter((pod) => name(pod.metadata?.name ?? '') && namespace(pod.metadata?.namespace ?? '')),
    filters,
  )
}

export function crictlSelectContainers(containers: readonly Container[], filters: CrictlListOptions & {name?: string}): Container[] {
  const name = regexMatcher(filters.name, '--name')
  return newestSlice(
    containers.filter((container) => name(container.metadata?.name ?? '')),
    filters,
  )
}

export function podState(state: string): string {
  return state === 'SANDBOX_READY' ? 'Ready' : 'NotReady'
}

export function containerState(state: string): string {
  const names: Record<string, string> = {
    CONTAINER_CREATED: 'Created',
    CONTAINER_RUNNING: 'Running',
    CONTAINER_EXITED: 'Exited',
  }
  return names[state] ?? 'Unknown'
}

const runtimeHandler = (pod: PodSandbox) => pod.runtimeHandler || '(default)'
const sortedEntries = (map: Record<string, string>) =>
  Object.keys(map)
    .sort()
    .map((key) => `\t${key} -> ${map[key]}\n`)
    .join('')

/** `crictl pods`: the table, -q IDs, or -v blocks (stdout, exactly). */
export function crictlPodsText(pods: readonly PodSandbox[], options: CrictlListOptions): string {
  if (options.quiet) return pods.map((pod) => `${pod.id}\n`).join('')
  if (options.verbose) return pods.map((pod) => podBlock(pod)).join('')
  const now = options.now ?? Date.now()
  const rows = [['POD ID', 'CREATED', 'STATE', 'NAME', 'NAMESPACE', 'ATTEMPT', 'RUNTIME']]
  for (const pod of pods) {
    rows.push([
      options.noTrunc ? pod.id : crictlTruncate(pod.id),
      humanAge(pod.createdAt, now),
      podState(pod.state),
      pod.metadata?.name ?? '',
      pod.metadata?.namespace ?? '',
      String(pod.metadata?.attempt ?? 0),
      runtimeHandler(pod),
    ])
  }

  return tabwrite(rows)
}

/** One `crictl pods -v` block; fields crictl leaves out when empty are left out. */
export function podBlock(pod: PodSandbox): string {
  const metadata = pod.metadata
  let text = `ID: ${pod.id}\n`
  if (metadata?.name) text += `Name: ${metadata.name}\n`
  if (metadata?.uid) text += `UID: ${metadata.uid}\n`
  if (metadata?.namespace) text += `Namespace: ${metadata.namespace}\n`
  if (metadata?.attempt) text += `Attempt: ${metadata.attempt}\n`
  text += `Status: ${podState(pod.state)}\nCreated: ${goTimeString(pod.createdAt || '0')}\n`
  if (Object.keys(pod.labels).length > 0) text += `Labels:\n${sortedEntries(pod.labels)}`
  if (Object.keys(pod.annotations).length > 0) text += `Annotations:\n${sortedEntries(pod.annotations)}`
  return `${text}Runtime: ${runtimeHandler(pod)}\n\n`
}

const SHA256 = /^sha256:[a-f0-9]{64}$/

/** `crictl ps`: the table, -q IDs, or -v blocks. `repoImage` answers -r (the image's first tag). */
export function crictlPsText(
  containers: readonly Container[],
  options: CrictlListOptions & {repoImage?: (image: string) => string},
): string {
  if (options.quiet) return containers.map((container) => `${container.id}\n`).join('')
  const now = options.now ?? Date.now()
  if (options.verbose) return containers.map((container) => containerBlock(container, now)).join('')
  const rows = [['CONTAINER', 'IMAGE', 'CREATED', 'STATE', 'NAME', 'ATTEMPT', 'POD ID', 'POD']]
  for (const container of containers) {
    let image = container.image?.image ?? ''
    // The kubelet creates containers by image ID: crictl shortens a digest to 13 hex characters.
    if (!options.noTrunc && SHA256.test(image)) image = crictlTruncate(image, 'sha256:')
    if (options.repoImage) image = options.repoImage(image)
    rows.push([
      options.noTrunc ? container.id : crictlTruncate(container.id),
      image,
      humanAge(container.createdAt, now),
      containerState(container.state),
      container.metadata?.name ?? '',
      String(container.metadata?.attempt ?? 0),
      options.noTrunc ? container.podSandboxId : crictlTruncate(container.podSandboxId),
      container.labels[PodLabel.name] ?? 'unknown',
    ])
  }

  return tabwrite(rows)
}

/** One `crictl ps -v` block: Created is the age, as crictl prints it there. */
export function containerBlock(container: Container, now: number): string {
  let text = `ID: ${container.id}\nPodID: ${container.podSandboxId}\n`
  if (container.metadata) {
    if (container.metadata.name) text += `Name: ${container.metadata.name}\n`
    text += `Attempt: ${container.metadata.attempt}\n`
  }

  text += `State: ${containerState(container.state)}\n`
  if (container.image) text += `Image: ${container.image.image}\n`
  text += `Created: ${humanAge(container.createdAt, now)}\n`
  if (Object.keys(container.labels).length > 0) text += `Labels:\n${sortedEntries(container.labels)}`
  if (Object.keys(container.annotations).length > 0) text += `Annotations:\n${sortedEntries(container.annotations)}`
  return `${text}\n`
}

/** The image crictl's --image and -r resolve a name to (containerd's ImageStatus: ID, ID prefix, tag or digest). */
export function findImage(images: readonly Image[], ref: string): Image | undefined {
  if (ref === '') return undefined
  const hex = ref.replace(/^sha256:/, '')
  const byId = images.filter((image) => image.id === ref || (/^[a-f0-9]+$/.test(hex) && image.id.replace(/^sha256:/, '').startsWith(hex)))
  if (byId.length === 1) return byId[0]
  const named = normalizeName(ref)
  return images.find((image) => image.repoTags.includes(named) || image.repoDigests.includes(named))
}

/** docker's normalisation of a reference: docker.io/library/ for short names, :latest without a tag or digest. */
function normalizeName(ref: string): string {
  const slash = ref.indexOf('/')
  const first = slash === -1 ? '' : ref.slice(0, slash)
  const hasDomain = first.includes('.') || first.includes(':') || first === 'localhost'
  let name = hasDomain ? ref : `docker.io/${slash === -1 ? 'library/' : ''}${ref}`
  const lastPart = name.slice(name.lastIndexOf('/') + 1)
  if (!lastPart.includes(':') && !name.includes('@')) name += ':latest'
  return name
}

export interface CrictlImagesOptions {
  quiet?: boolean
  verbose?: boolean
  noTrunc?: boolean
  digests?: boolean
  pinned?: boolean
}

/** `crictl images`: sorted by first tag; one row per tag; -q IDs; -v blocks. */
export function crictlImagesText(list: readonly Image[], options: CrictlImagesOptions): string {
  const images = [...list].sort(imageOrder)
  if (options.quiet) return images.map((image) => `${image.id}\n`).join('')
  if (options.verbose) return images.map((image) => imageBlock(image)).join('')
  const header = ['IMAGE', 'TAG', ...(options.digests ? ['DIGEST'] : []), 'IMAGE ID', 'SIZE', ...(options.pinned ? ['PINNED'] : [])]
  const rows = [header]
  for (const image of images) {
    const [repository, digest] = repoDigestOf(image.repoDigests)
    const id = options.noTrunc ? image.id : crictlTruncate(image.id, 'sha256:')
    const shownDigest = options.noTrunc ? digest : crictlTruncate(digest, 'sha256:')
    for (const [name, tag] of repoTagPairs(image.repoTags, repository)) {
      rows.push([
        name,
        tag,
        ...(options.digests ? [shownDigest] : []),
        id,
        goHumanSize(image.size, 3),
        ...(options.pinned ? [String(image.pinned)] : []),
      ])
    }
  }

  return tabwrite(rows)
}

function imageBlock(image: Image): string {
  let text = `ID: ${image.id}\n`
  for (const tag of image.repoTags) text += `RepoTags: ${tag}\n`
  for (const digest of image.repoDigests) text += `RepoDigests: ${digest}\n`
  if (image.size !== '0' && image.size !== '') text += `Size: ${image.size}\n`
  if (image.uid) text += `Uid: value:${image.uid.value}\n`
  if (image.username) text += `Username: ${image.username}\n`
  if (image.pinned) text += `Pinned: true\n`
  return `${text}\n`
}

function repoDigestOf(repoDigests: readonly string[]): [string, string] {
  if (repoDigests.length === 0) return ['<none>', '<none>']
  const parts = repoDigests[0].split('@')
  return parts.length === 2 ? [parts[0], parts[1]] : ['errorName', 'errorRepoDigest']
}

function repoTagPairs(repoTags: readonly string[], imageName: string): Array<[string, string]> {
  if (repoTags.length === 0) return [[imageName, '<none>']]
  return repoTags.map((repoTag) => {
    const colon = repoTag.lastIndexOf(':')
    if (colon === -1) return ['errorRepoTag', 'errorRepoTag']
    const name = repoTag.slice(0, colon)
    return [name === '<none>' ? imageName : name, repoTag.slice(colon + 1)]
  })
}

/** crictl's imageByRef: by first tag when both have one, else by first digest, else by ID (code-unit order, not the locale's). */
function imageOrder(a: Image, b: Image): number {
  const compare = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0)
  if (a.repoTags.length > 0 && b.repoTags.length > 0) return compare(a.repoTags[0], b.repoTags[0])
  if (a.repoDigests.length > 0 && b.repoDigests.length > 0) return compare(a.repoDigests[0], b.repoDigests[0])
  return compare(a.id, b.id)
}
