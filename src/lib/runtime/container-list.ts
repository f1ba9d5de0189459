import type {CriClient} from '../cri/client.js'
import {mapLimit} from '../concurrency.js'
import {UsageError} from '../errors.js'
import {nameMatcher, takeNewest} from '../filters.js'
import {TRUNCATED_ID_LENGTH} from '../output/format.js'
import type {Container, ContainerState, PodSandbox} from '../../generated/runtime/v1/api.js'
import {ContainerLabel, PodLabel, podFullName} from './labels.js'
import {newestFirst} from './pods.js'
import {matchPodSandboxes} from './resolve.js'

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
  /** Filled for exited containers only when asked for (one ContainerStatus each). */
  exitCode?: number
}

/** At most this many ContainerStatus calls in flight for `ps -o wide`. */
export const STATUS_CONCURRENCY = 8

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
 * One ListContainers (state and labels filtered by the runtime) and one ListPodSandbox for pod
 * names, concurrently; everything else is filtered here so every output format sees the same list.
 */
export async function listContainers(
  client: CriClient,
  filters: ContainerListFilters,
  options: {withExitCodes?: boolean} = {},
): Promise<ContainerListEntry[]> {
  checkFilters(filters)
  const state = stateToRequest(filters)
  const [{containers}, {items: sandboxes}] = await Promise.all([
    client.runtime('listContainers', {filter: {labelSelector: filters.labels ?? {}, state: state === undefined ? undefined : {state}}}),
    client.runtime('listPodSandbox', {}),
  ])
  const entries = selectContainers(containers, sandboxes, filters)
  if (options.withExitCodes) {
    const exited = entries.filter((entry) => entry.container.state === 'CONTAINER_EXITED')
    await mapLimit(exited, STATUS_CONCURRENCY, async (entry) => {
      const {status} = await client.runtime('containerStatus', {containerId: entry.container.id, verbose: false})
      entry.exitCode = status?.exitCode
    })
  }

  return entries
}

/** Usage mistakes caught before any runtime call. */
export function checkFilters(filters: ContainerListFilters): void {
  if (filters.pod !== undefined && filters.namespace?.includes('*')) {
    throw new UsageError(`--pod cannot be combined with a glob --namespace "${filters.namespace}"; give an exact namespace or use name_namespace`)
  }
}

/** The client-side half of listContainers: pure, unit tested. Newest first. */
export function selectContainers(
  containers: readonly Container[],
  sandboxes: readonly PodSandbox[],
  filters: ContainerListFilters,
): ContainerListEntry[] {
  checkFilters(filters)
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
        (filters.image === undefined || imageCandidates(c).some(matchImage)),
    )
    .map((container) => entryFor(container, byId.get(container.podSandboxId)))
    .filter((entry) => filters.namespace === undefined || matchNamespace(entry.podNamespace))
    .sort((a, b) => newestFirst(a.container, b.container))
  return takeNewest(entries, filters)
}

function entryFor(container: Container, sandbox: PodSandbox | undefined): ContainerListEntry {
  // The sandbox is authoritative; the kubelet's labels on the container are the fallback once it is gone.
  return {
    container,
    sandbox,
    podName: sandbox?.metadata?.name ?? container.labels[PodLabel.name] ?? '',
    podNamespace: sandbox?.metadata?.namespace ?? container.labels[PodLabel.namespace] ?? '',
  }
}

export function containerName(container: Container): string {
  return container.metadata?.name || container.labels[ContainerLabel.name] || ''
}

/** What `--image` matches: the image as the user wrote it, the spec's image and the resolved ref. */
export function imageCandidates(container: Container): string[] {
  return [container.image?.userSpecifiedImage, container.image?.image, container.imageRef].filter(
    (value): value is string => Boolean(value),
  )
}

/** The IMAGE column: what the user asked for when the runtime kept it, else the spec's image. */
export function displayImage(container: Container, noTrunc = false): string {
  const image = container.image?.userSpecifiedImage || container.image?.image || container.imageRef
  return truncateDigest(image, noTrunc)
}

/** crictl's rule: a bare digest (`sha256:<hex>`) is shortened to 13 hex characters; names stay whole. */
export function truncateDigest(value: string, noTrunc = false): string {
  if (noTrunc) return value
  const digest = /^[a-z0-9]+(?:[+._-][a-z0-9]+)*:([a-f0-9]{32,})$/.exec(value)
  return digest ? digest[1].slice(0, TRUNCATED_ID_LENGTH) : value
}

const STATE_LABELS: Partial<Record<string, string>> = {
  CONTAINER_CREATED: 'Created',
  CONTAINER_RUNNING: 'Running',
  CONTAINER_EXITED: 'Exited',
}

export function stateLabel(state: ContainerState | string): string {
  return STATE_LABELS[state] ?? 'Unknown'
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
