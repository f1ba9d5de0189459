/**
 * The runtime calls behind crictl's `pods` and `ps`: what crictl sends the runtime (ID, pod ID,
 * state and labels as the CRI filter) and what it then filters itself (lists.ts). --image is
 * compared by image ID as crictl does with two ImageStatus calls; podctl resolves both names from
 * one ListImages instead of two calls per container.
 */
import type {CriClient} from '../cri/client.js'
import {UsageError} from '../errors.js'
import {inCrictlWords} from './errors.js'
import type {Container, ContainerState, Image, PodSandbox, PodSandboxState} from '../../generated/runtime/v1/api.js'
import {type CrictlListOptions, crictlSelectContainers, crictlSelectPods, findImage} from './lists.js'

/** crictl's parseLabelStringSlice: each --label is exactly KEY=VALUE (no commas, one "="). */
export function crictlLabels(values: readonly string[] | undefined): Record<string, string> {
  const labels: Record<string, string> = {}
  for (const value of values ?? []) {
    const pair = value.split('=')
    if (pair.length !== 2) throw inCrictlWords(new UsageError(`incorrectly specified label: ${value}`))
    labels[pair[0]] = pair[1]
  }

  return labels
}

export interface CrictlPodFilters extends CrictlListOptions {
  id?: string
  name?: string
  namespace?: string
  state?: 'ready' | 'notready'
  labels?: Record<string, string>
}

export async function listCrictlPods(client: CriClient, filters: CrictlPodFilters): Promise<PodSandbox[]> {
  const state =
    filters.state === undefined ? undefined : {state: (filters.state === 'ready' ? 'SANDBOX_READY' : 'SANDBOX_NOTREADY') as PodSandboxState}
  const {items} = await client.runtime('listPodSandbox', {filter: {id: filters.id ?? '', state, labelSelector: filters.labels ?? {}}})
  // Matched again here: runtimes resolve an ID prefix, and a fake or older one may not filter at all.
  const byId = filters.id ? items.filter((pod) => pod.id.startsWith(filters.id!)) : items
  const byState = state ? byId.filter((pod) => pod.state === state.state) : byId
  return crictlSelectPods(byState, filters)
}

export interface CrictlContainerFilters extends CrictlListOptions {
  all?: boolean
  id?: string
  pod?: string
  name?: string
  image?: string
  state?: 'created' | 'running' | 'exited' | 'unknown'
  labels?: Record<string, string>
  resolveImagePath?: boolean
}

const STATES: Record<NonNullable<CrictlContainerFilters['state']>, ContainerState> = {
  created: 'CONTAINER_CREATED' as ContainerState,
  running: 'CONTAINER_RUNNING' as ContainerState,
  exited: 'CONTAINER_EXITED' as ContainerState,
  unknown: 'CONTAINER_UNKNOWN' as ContainerState,
}

/** The state crictl asks for: running unless -a or --state; none with --latest or --last. */
export function crictlStateFilter(filters: CrictlContainerFilters): ContainerState | undefined {
  if (filters.latest || (filters.last ?? 0) > 0) return undefined
  if (filters.state) return STATES[filters.state]
  return filters.all ? undefined : STATES.running
}

export interface CrictlContainerList {
  containers: Container[]
  /** -r: the image's first tag, else the name as shown. */
  repoImage?: (image: string) => string
}

export async function listCrictlContainers(client: CriClient, filters: CrictlContainerFilters): Promise<CrictlContainerList> {
  const state = crictlStateFilter(filters)
  const needImages = Boolean(filters.image) || Boolean(filters.resolveImagePath)
  const [{containers}, images] = await Promise.all([
    client.runtime('listContainers', {
      filter: {
        id: filters.id ?? '',
        podSandboxId: filters.pod ?? '',
        state: state === undefined ? undefined : {state},
        labelSelector: filters.labels ?? {},
      },
    }),
    needImages ? client.image('listImages', {}).then((response) => response.images) : Promise.resolve([] as Image[]),
  ])
  const listed = containers.filter(
    (c) =>
      (!filters.id || c.id.startsWith(filters.id)) &&
      (!filters.pod || c.podSandboxId.startsWith(filters.pod)) &&
      (state === undefined || c.state === state),
  )
  let selected = crictlSelectContainers(listed, filters)
  if (filters.image) {
    // crictl: an image that does not exist matches no container.
    const wanted = findImage(images, filters.image)?.id
    selected = wanted === undefined ? [] : selected.filter((c) => findImage(images, c.image?.image ?? '')?.id === wanted)
  }

  const repoImage = filters.resolveImagePath ? (image: string) => findImage(images, image)?.repoTags[0] ?? image : undefined
  return {containers: selected, repoImage}
}

/** crictl's images: REPOSITORY[:TAG] goes to the runtime as ListImages' filter (containerd 1.6 ignores it). */
export async function listCrictlImages(client: CriClient, repository: string | undefined): Promise<Image[]> {
  const filter = repository ? {image: {image: repository, annotations: {}}} : undefined
  return (await client.image('listImages', {filter})).images
}
