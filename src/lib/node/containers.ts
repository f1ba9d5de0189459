import type {CriClient, RuntimeRequest} from '../cri/client.js'
import {mapLimit, RUNTIME_CALLS_IN_FLIGHT} from '../util/concurrency.js'
import {NotFoundError, UsageError} from '../errors.js'
import {exactFilters, exactNameHint, nameMatcher, prefixGlobs, takeNewest} from '../util/filters.js'
import type {Container, ContainerState, Image, PodSandbox} from '../../generated/runtime/v1/api.js'
import {podFullName, shortId, toKubeContainerState} from '../kube/helpers.js'
import {containerName, PodLabel} from '../kube/labels.js'
import {newestFirst} from './pods.js'
import {matchPodSandboxes} from './resolve.js'

// ps has always imported the container name reader from here.
export {containerName} from '../kube/labels.js'

export const CONTAINER_STATES = ['created', 'running', 'exited', 'unknown'] as const
export type ContainerStateName = (typeof CONTAINER_STATES)[number]

const STATE_VALUES: Record<ContainerStateName, ContainerState> = {
  created: 'CONTAINER_CREATED' as ContainerState,
  running: 'CONTAINER_RUNNING' as ContainerState,
  exited: 'CONTAINER_EXITED' as ContainerState,
  unknown: 'CONTAINER_UNKNOWN' as ContainerState,
}

export interface ContainerListFilters {
  /** All states; without it (and without state/latest/last) only running containers are listed. */
  all?: boolean
  /** Sent to the runtime. */
  state?: ContainerStateName
  /** Sent to the runtime as the label selector. */
  labels?: Record<string, string>
  /** Container name, exact or a `*` glob. */
  name?: string
  /** Pod name (in `namespace`, default "default"), `name_namespace`, or sandbox ID prefix. */
  pod?: string
  /** Pod namespace, exact or a `*` glob. */
  namespace?: string
  /** The image as the user gave it, or the image ref, exact or a `*` glob. */
  image?: string
  /** Container ID prefix. */
  id?: string
  latest?: boolean
  last?: number
}

export interface ContainerListEntry {
  container: Container
  /** The container's sandbox when it is still listed. */
  sandbox?: PodSandbox
  podName: string
  podNamespace: string
  /** The image as a person would name it: as given at creation, else a tag of the image, else its ID. */
  imageName: string
  /** Filled for exited containers only when asked for (one ContainerStatus each). */
  exitCode?: number
}

/**
 * The state the runtime is asked for. Like crictl and docker, `--latest`/`--last` look at every
 * state ("the last container I started" is usually one that just exited).
 */
export function stateToRequest(filters: ContainerListFilters): ContainerState | undefined {
  if (filters.state !== undefined) return STATE_VALUES[filters.state]
  if (filters.all || filters.latest || filters.last !== undefined) return undefined
  return STATE_VALUES.running
}

/**
 * One ListContainers (state and labels filtered by the runtime) and, where the containers' labels do
 * not name their pods, one ListPodSandbox; everything else is filtered here so every output format sees the same list.
 */
export async function listContainers(
  client: CriClient,
  filters: ContainerListFilters,
  options: {withExitCodes?: boolean; withImageNames?: boolean; summaries?: boolean} = {},
): Promise<ContainerListEntry[]> {
  checkFilters(filters)
  // The kubelet creates containers with the image ID and runtimes before CRI 1.29 drop the name
  // the user gave, so one ListImages (never an ImageStatus per container, crictl's `ps -r`) turns
  // IDs back into tags for the IMAGE column and --image. Only for display: a failure shows IDs.
  const withImages = options.withImageNames || filters.image !== undefined
  const request = containerListRequest(filters)
  // Summaries (cri/summaries.ts) for tables and names: no annotations, and sandboxes only for their names.
  const {summaries} = options
  const listSandboxes = async () =>
    (summaries ? await client.listSummaries('listPodSandbox', {}) : await client.runtime('listPodSandbox', {})).items
  // --pod matches sandboxes, so they are listed beside the containers; otherwise only when a
  // container lacks the kubelet's pod labels (made by crictl, say): on a kubelet's node, ListPodSandbox
  // would be a quarter more bytes to read for names the containers already carry.
  const [{containers}, podSandboxes, images] = await Promise.all([
    summaries ? client.listSummaries('listContainers', request) : client.runtime('listContainers', request),
    filters.pod === undefined ? undefined : listSandboxes(),
    withImages ? listImagesForDisplay(client) : undefined,
  ])
  const sandboxes = podSandboxes ?? (containers.every(namedByLabels) ? [] : await listSandboxes())
  const entries = selectContainers(containers, sandboxes, filters, images)
  if (options.withExitCodes) {
    const exited = entries.filter((entry) => entry.container.state === 'CONTAINER_EXITED')
    await mapLimit(exited, RUNTIME_CALLS_IN_FLIGHT, async (entry) => {
      try {
        const {status} = await client.runtime('containerStatus', {containerId: entry.container.id, verbose: false})
        entry.exitCode = status?.exitCode
      } catch (error) {
        // Removed since it was listed: the row stays, without an exit code.
        if (!(error instanceof NotFoundError)) throw error
      }
    })
  }

  return entries
}

/** ListContainers' request: state and labels are filtered by the runtime. */
export function containerListRequest(filters: ContainerListFilters): RuntimeRequest<'listContainers'> {
  const state = stateToRequest(filters)
  return {filter: {labelSelector: filters.labels ?? {}, state: state === undefined ? undefined : {state}}}
}

/** ListImages for turning image IDs into names; only for display, so a failure gives undefined (IDs are shown). */
export async function listImagesForDisplay(client: CriClient): Promise<Image[] | undefined> {
  return client.image('listImages', {}).then(
    (r) => r.images,
    () => undefined,
  )
}

/** Usage mistakes caught before any runtime call. */
export function checkFilters(filters: ContainerListFilters): void {
  if (filters.pod !== undefined && filters.namespace?.includes('*')) {
    throw new UsageError(
      `--pod cannot be combined with a glob --namespace "${filters.namespace}"; give an exact namespace or use name_namespace`,
    )
  }
}

/** The client-side half of listContainers: pure, unit tested. Newest first. */
export function selectContainers(
  containers: readonly Container[],
  sandboxes: readonly PodSandbox[],
  filters: ContainerListFilters,
  images?: readonly Image[],
): ContainerListEntry[] {
  checkFilters(filters)
  const tags = imageTagsById(images)
  const byId = new Map(sandboxes.map((pod) => [pod.id, pod]))
  // --pod names a pod, so all its sandboxes (attempts) count; an unknown pod is an error, not an empty list.
  const podIds =
    filters.pod === undefined
      ? undefined
      : new Set(matchPodSandboxes(sandboxes, filters.pod, {namespace: filters.namespace}).map((pod) => pod.id))
  const wantedState = stateToRequest(filters)
  const matchName = nameMatcher(filters.name)
  const matchNamespace = nameMatcher(filters.namespace)
  const matchImage = nameMatcher(filters.image)

  const entries = containers
    .filter(
      (c) =>
        // The runtime filtered already; checking again keeps the pure function honest on its own.
        (wantedState === undefined || c.state === wantedState) &&
        (filters.id === undefined || c.id.startsWith(filters.id)) &&
        (podIds === undefined || podIds.has(c.podSandboxId)) &&
        matchName(containerName(c)) &&
        (filters.image === undefined || imageCandidates(c, tags).some(matchImage)),
    )
    .map((container) => entryFor(container, byId.get(container.podSandboxId), tags))
    .filter((entry) => filters.namespace === undefined || matchNamespace(entry.podNamespace))
    .sort((a, b) => newestFirst(a.container, b.container))
  return takeNewest(entries, filters)
}

/** A container the kubelet made names its pod and namespace in its labels, as its sandbox does. */
export function namedByLabels(container: Container): boolean {
  return Boolean(container.labels[PodLabel.name] && container.labels[PodLabel.namespace])
}

function entryFor(container: Container, sandbox: PodSandbox | undefined, tags: ReadonlyMap<string, string[]>): ContainerListEntry {
  // The sandbox is authoritative where it was listed; the kubelet's labels on the container otherwise (and once it is gone).
  return {
    container,
    sandbox,
    podName: sandbox?.metadata?.name ?? container.labels[PodLabel.name] ?? '',
    podNamespace: sandbox?.metadata?.namespace ?? container.labels[PodLabel.namespace] ?? '',
    imageName: imageName(container, tags),
  }
}

/** What the image readers below look at. */
export type ContainerImageFields = Pick<Container, 'image' | 'imageRef' | 'imageId'>

/** Image ID → its tags (else its repo digests), from one ListImages. */
export function imageTagsById(images: readonly Image[] | undefined): Map<string, string[]> {
  const tags = new Map<string, string[]>()
  for (const image of images ?? []) tags.set(image.id, image.repoTags.length > 0 ? image.repoTags : image.repoDigests)
  return tags
}

function tagsOf(container: ContainerImageFields, tags: ReadonlyMap<string, string[]>): string[] {
  return tags.get(container.image?.image ?? '') ?? tags.get(container.imageRef) ?? tags.get(container.imageId) ?? []
}

/**
 * What the user would call the image: as given at creation (userSpecifiedImage), else the spec's
 * image when it is a name, else the first tag of the image it resolved to, else the ID.
 */
export function imageName(container: ContainerImageFields, tags: ReadonlyMap<string, string[]> = new Map()): string {
  const specified = container.image?.userSpecifiedImage || container.image?.image || ''
  if (specified && !isDigest(specified)) return specified
  return tagsOf(container, tags)[0] ?? (specified || container.imageRef)
}

/** What `--image` matches: the image as the user wrote it, the spec's image, the resolved ref, and the image's tags. */
export function imageCandidates(container: ContainerImageFields, tags: ReadonlyMap<string, string[]> = new Map()): string[] {
  return [container.image?.userSpecifiedImage, container.image?.image, container.imageRef, ...tagsOf(container, tags)].filter(
    (value): value is string => Boolean(value),
  )
}

/** `algorithm:hex`, or 64 bare hex digits: CRI-O's image IDs have no `sha256:` prefix. */
const DIGEST = /^(?:[a-z0-9]+(?:[+._-][a-z0-9]+)*:([a-f0-9]{32,})|([a-f0-9]{64}))$/

/**
 * The hex of a bare digest, else undefined; remembered per value, because a node's thousands of
 * containers run a few dozen images and a listing asks twice a row. Bounded for long supervisors.
 */
const digests = new Map<string, string | undefined>()
function digestHex(value: string): string | undefined {
  if (digests.has(value)) return digests.get(value)
  if (digests.size >= 512) digests.clear()
  const match = DIGEST.exec(value)
  const hex = match?.[1] ?? match?.[2]
  digests.set(value, hex)
  return hex
}

export function isDigest(value: string): boolean {
  return digestHex(value) !== undefined
}

/** crictl's rule: a bare digest (`sha256:<hex>`) is shortened to 13 hex characters; names stay whole. */
export function truncateDigest(value: string, noTrunc = false): string {
  if (noTrunc) return value
  const hex = digestHex(value)
  return hex === undefined ? value : shortId(hex)
}

export function stateLabel(state: ContainerState | string): string {
  return toKubeContainerState(state)
}

/**
 * `name_namespace/container`: the form resolveContainer accepts back (POD/CONTAINER with the
 * kubelet's full pod name), so `-o name` output can feed other commands. Without a pod, the ID.
 */
export function containerRefName(entry: ContainerListEntry): string {
  const name = containerName(entry.container)
  if (!entry.podName || !entry.podNamespace || !name) return entry.container.id
  return `${podFullName(entry.podName, entry.podNamespace)}/${name}`
}

/**
 * After an empty list: the hint that --name or --namespace match whole names only, given only when
 * their prefix globs list some container (with the other filters as they were); undefined otherwise.
 */
export async function containersNameHint(client: CriClient, filters: ContainerListFilters): Promise<string | undefined> {
  // With --pod the namespace is the pod's, never a glob (checkFilters).
  const names = {name: filters.name, namespace: filters.pod === undefined ? filters.namespace : undefined}
  if (exactFilters(names).length === 0) return undefined
  const found = await listContainers(client, {...filters, ...prefixGlobs(names)})
  return found.length > 0 ? exactNameHint(names) : undefined
}
