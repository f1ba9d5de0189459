/**
 * The runtime calls behind crictl v1.37's listings (ListPodSandboxes, ListContainers, ListImages in
 * sandbox.go, container.go, image.go): what crictl sends the runtime as the CRI filter (ID, pod ID,
 * state, labels), what it then filters itself (names and namespaces as Go regexps, --image by the
 * image IDs ImageStatus answers, images --filter), newest first, --latest/--last. Failures carry
 * crictl's words for the step that failed; the commands add theirs.
 */
import type {CriClient} from '../cri/client.js'
import type {Container, ContainerState, Image, PodSandbox, PodSandboxState} from '../../generated/runtime/v1/api.js'
import {PodLabel} from '../kube/labels.js'
import {byImageRef, newestFirst} from './list-order.js'
import {compileGoRegexp, crictlRegex, GoRegexpError} from './go-regexp.js'
import {type CrictlListOptions, repoDigestOf, repoTagPairs, truncateCount} from './lists.js'
import {CrictlError, wrap} from './session.js'

/** crictl's parseLabelStringSlice: each --label is exactly KEY=VALUE (one "="). */
export function crictlLabels(values: readonly string[]): Record<string, string> {
  const labels: Record<string, string> = {}
  for (const value of values) {
    const pair = value.split('=')
    if (pair.length !== 2) throw new CrictlError(`incorrectly specified label: ${value}`)
    labels[pair[0]] = pair[1]
  }

  return labels
}

async function regex(pattern: string | undefined): Promise<(value: string) => boolean> {
  try {
    return await crictlRegex(pattern)
  } catch (error) {
    throw new CrictlError((error as Error).message)
  }
}

export interface CrictlPodFilters extends CrictlListOptions {
  id?: string
  name?: string
  namespace?: string
  state?: string
  labels?: Record<string, string>
}

/** ListPodSandboxes: the sandboxes crictl lists, in its order (errors as `list pod sandboxes`' callee words them). */
export async function listCrictlPods(client: CriClient, filters: CrictlPodFilters): Promise<PodSandbox[]> {
  let state: PodSandboxState | undefined
  if (filters.state) {
    const states: Record<string, PodSandboxState> = {
      ready: 'SANDBOX_READY' as PodSandboxState,
      notready: 'SANDBOX_NOTREADY' as PodSandboxState,
    }
    state = states[filters.state.toLowerCase()]
    if (!state) throw new CrictlError('--state should be ready or notready')
  }

  let items: PodSandbox[]
  try {
    ;({items} = await client.runtime('listPodSandbox', {
      filter: {id: filters.id ?? '', state: state && {state}, labelSelector: filters.labels ?? {}},
    }))
  } catch (error) {
    throw wrap('call list sandboxes RPC', error)
  }

  const name = await regex(filters.name)
  const namespace = await regex(filters.namespace)
  const selected = items.filter((pod) => pod.metadata && name(pod.metadata.name) && namespace(pod.metadata.namespace))
  return truncateCount(newestFirst(selected), filters)
}

export interface CrictlContainerFilters extends CrictlListOptions {
  all?: boolean
  id?: string
  pod?: string
  name?: string
  namespace?: string
  image?: string
  state?: string
  labels?: Record<string, string>
}

const STATES: Record<string, ContainerState> = {
  created: 'CONTAINER_CREATED' as ContainerState,
  running: 'CONTAINER_RUNNING' as ContainerState,
  exited: 'CONTAINER_EXITED' as ContainerState,
  unknown: 'CONTAINER_UNKNOWN' as ContainerState,
}

/** The state crictl asks for: running unless -a or --state; none with --latest or --last. */
export function crictlStateFilter(filters: CrictlContainerFilters): ContainerState | undefined {
  let state = filters.all || filters.state ? undefined : STATES.running
  if (filters.state) {
    state = STATES[filters.state.toLowerCase()]
    if (!state) throw new CrictlError('--state should be one of created, running, exited or unknown')
  }

  return filters.latest || (filters.last ?? 0) > 0 ? undefined : state
}

/** ImageStatus of an image, asked once per name (crictl asks for every container; the answers are the same). */
export function imageStatusCache(image: CriClient | undefined): (ref: string) => Promise<Image | undefined> {
  const answers = new Map<string, Promise<Image | undefined>>()
  return (ref) => {
    let answer = answers.get(ref)
    if (!answer) {
      answer = image
        ? image.image('imageStatus', {image: {image: ref}, verbose: false}).then((response) => response.image)
        : Promise.resolve(undefined)
      answers.set(ref, answer)
    }

    return answer
  }
}

/** ListContainers and getContainersList. */
export async function listCrictlContainers(
  runtime: CriClient,
  image: CriClient | undefined,
  filters: CrictlContainerFilters,
): Promise<Container[]> {
  const state = crictlStateFilter(filters)
  let containers: Container[]
  try {
    ;({containers} = await runtime.runtime('listContainers', {
      filter: {id: filters.id ?? '', podSandboxId: filters.pod ?? '', state: state && {state}, labelSelector: filters.labels ?? {}},
    }))
  } catch (error) {
    throw wrap('call list containers RPC', error)
  }

  const name = await regex(filters.name)
  const namespace = await regex(filters.namespace)
  const status = imageStatusCache(image)
  const selected: Container[] = []
  for (const container of containers) {
    if (filters.image && image) {
      let same: boolean
      try {
        const [wanted, used] = await Promise.all([status(filters.image), status(container.image?.image ?? '')])
        same = wanted !== undefined && used !== undefined && wanted.id === used.id
      } catch (error) {
        throw wrap('check image match', error)
      }

      if (!same) continue
    }

    const podNamespace = container.labels[PodLabel.namespace] ?? 'unknown'
    if (container.metadata && name(container.metadata.name) && namespace(podNamespace)) selected.push(container)
  }

  return truncateCount(newestFirst(selected), filters)
}

/** ListImages: REPOSITORY[:TAG] goes to the runtime as the filter, then crictl's order and its --filter conditions. */
export async function listCrictlImages(client: CriClient, nameFilter: string, conditions: readonly string[]): Promise<Image[]> {
  const {images} = await client.image('listImages', {filter: {image: {image: nameFilter}}})
  const sorted = byImageRef(images)
  if (conditions.length === 0 || sorted.length === 0) return sorted
  try {
    return await filterImages(sorted, conditions)
  } catch (error) {
    throw new CrictlError(`filter images: ${(error as Error).message}`)
  }
}

/** filterImagesList: each condition in turn. */
async function filterImages(images: readonly Image[], conditions: readonly string[]): Promise<Image[]> {
  let filtered = [...images]
  for (const condition of conditions) {
    if (condition.startsWith('before=')) filtered = byBeforeSince(condition.slice(7), [...filtered].reverse()).reverse()
    else if (condition.startsWith('dangling=')) {
      const value = condition.slice(9)
      filtered = filtered.filter(
        (image) => (value === 'true' && image.repoTags.length === 0) || (value === 'false' && image.repoTags.length > 0),
      )
    } else if (condition.startsWith('reference=')) filtered = await byReference(condition.slice(10), filtered)
    else if (condition.startsWith('since=')) filtered = byBeforeSince(condition.slice(6), filtered)
    else throw new Error(`unknown filter flag: ${condition}`)
  }

  return filtered
}

/** filterByBeforeSince: the images listed before the one the value names (by name:tag, ID prefix or name@digest). */
function byBeforeSince(value: string, images: readonly Image[]): Image[] {
  const out: Image[] = []
  const hasColon = value.includes(':')
  const hasAt = value.includes('@')
  for (const image of images) {
    if (hasColon && !hasAt) {
      const [name] = repoDigestOf(image.repoDigests)
      if (repoTagPairs(image.repoTags, name)[0].join(':') === value) break
      out.push(image)
    }

    if (!hasColon && !hasAt) {
      if (image.id.startsWith(value)) break
      out.push(image)
    }

    if (hasColon && hasAt && image.repoDigests.length > 0) {
      if (image.repoDigests[0].startsWith(value)) break
      out.push(image)
    }
  }

  return out
}

async function byReference(value: string, images: readonly Image[]): Promise<Image[]> {
  let matches: (text: string) => boolean
  try {
    matches = await compileGoRegexp(value)
  } catch (error) {
    if (error instanceof GoRegexpError) throw new Error(error.message)
    throw error
  }

  return images.filter((image) => {
    const [name] = repoDigestOf(image.repoDigests)
    return matches(name) || name === value
  })
}
