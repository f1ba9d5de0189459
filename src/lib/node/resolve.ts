import type {CriClient} from '../cri/client.js'
import {AmbiguousError, NotFoundError, UsageError} from '../errors.js'
import type {Container, PodSandbox} from '../../generated/runtime/v1/api.js'
import {DEFAULT_NAMESPACE, podFullName, shortId} from '../kube/helpers.js'
import {ContainerLabel, PodctlAnnotation} from '../kube/labels.js'
import {newestFirst} from './pods.js'

/**
 * Turns what users type into runtime objects. Everywhere a pod is expected podctl accepts a
 * sandbox ID prefix, a pod name (in --namespace, default "default"), or the kubelet's full name
 * `name_namespace`; a container is an ID prefix or `POD/CONTAINER`. An ambiguous prefix is an
 * error that lists the matches.
 */
export interface ResolveOptions {
  namespace?: string
  /** kubectl's `-c NAME`: the container of the pod `ref` names (podctl's --container). */
  container?: string
}

/** kubectl's annotation naming the container `exec` and `logs` pick when none is named. */
export const DEFAULT_CONTAINER_ANNOTATION = 'kubectl.kubernetes.io/default-container'

/** All sandboxes (every attempt) of the pod named by `ref`, newest first. */
export async function resolvePodSandboxes(
  client: CriClient,
  ref: string,
  options: ResolveOptions = {},
  listed?: PodSandbox[],
): Promise<PodSandbox[]> {
  const sandboxes = listed ?? (await client.runtime('listPodSandbox', {})).items
  return matchPodSandboxes(sandboxes, ref, options)
}

/** Pure matching behind resolvePodSandboxes (unit tested). */
export function matchPodSandboxes(sandboxes: readonly PodSandbox[], ref: string, options: ResolveOptions = {}): PodSandbox[] {
  if (ref.trim() === '') throw new UsageError('pod reference is empty; give a pod name, name_namespace or sandbox ID prefix')
  const byName = (name: string, namespace: string) =>
    sandboxes.filter((pod) => pod.metadata?.name === name && pod.metadata?.namespace === namespace)

  // 1. name in the given (or default) namespace
  const namespace = options.namespace ?? DEFAULT_NAMESPACE
  let found = byName(ref, namespace)
  // 2. the kubelet's full name name_namespace (names cannot contain "_", so the split is exact)
  if (found.length === 0 && ref.includes('_')) {
    const [name, ns] = ref.split('_', 2)
    if (options.namespace === undefined || options.namespace === ns) found = byName(name, ns)
  }

  if (found.length > 0) return [...found].sort(newestFirst)

  // 3. sandbox ID prefix: all its attempts are the pods with the same name+namespace
  const byId = sandboxes.filter((pod) => pod.id.startsWith(ref))
  if (byId.length === 0) throw notFoundIn(sandboxes, ref, namespace, options.namespace !== undefined)

  const fullName = (pod: PodSandbox) => podFullName(pod.metadata?.name ?? '', pod.metadata?.namespace ?? '')
  const pods = new Set(byId.map(fullName))
  if (pods.size > 1) {
    const list = byId.map((pod) => `${shortId(pod.id)} (${fullName(pod)})`).join(', ')
    throw new AmbiguousError(`pod ID prefix "${ref}" matches ${byId.length} pods: ${list}; give more characters`)
  }

  const [first] = byId
  return byName(first.metadata?.name ?? '', first.metadata?.namespace ?? '').sort(newestFirst)
}

/**
 * The NotFound for a pod reference. A pod of that name in other namespaces is the usual slip
 * (kubectl's default namespace is "default" too), so the message names them and the flag to add.
 */
function notFoundIn(sandboxes: readonly PodSandbox[], ref: string, namespace: string, namespaceGiven: boolean): NotFoundError {
  const elsewhere = [...new Set(sandboxes.filter((pod) => pod.metadata?.name === ref).map((pod) => pod.metadata?.namespace ?? ''))]
    .filter((other) => other !== namespace)
    .sort()
  if (elsewhere.length > 0) {
    const add = elsewhere.length === 1 ? `add -n ${elsewhere[0]}` : 'add -n NAMESPACE'
    return new NotFoundError(`pod "${ref}" not found in namespace ${namespace}; it exists in ${elsewhere.join(', ')}: ${add}`)
  }

  const where = namespaceGiven ? ` in namespace "${namespace}"` : ''
  return new NotFoundError(`pod "${ref}" not found${where}; list pods with: podctl pods`)
}

/**
 * One container from an ID prefix, `POD/CONTAINER` (newest attempt), or, as kubectl takes it, a pod
 * name alone (its only container, or the one its default-container annotation names) or a pod with
 * `container` (--container). An ID prefix is tried first, as crictl takes it.
 */
export async function resolveContainer(client: CriClient, ref: string, options: ResolveOptions = {}): Promise<Container> {
  const listSandboxes = async () => (await client.runtime('listPodSandbox', {})).items
  if (!ref.includes('/') && options.container === undefined) {
    const {containers} = await client.runtime('listContainers', {})
    if (containers.some((c) => c.id.startsWith(ref)) || ref.trim() === '') return matchContainerId(containers, ref)
    return matchContainer(containers, await listSandboxes(), ref, options)
  }

  const [items, {containers}] = await Promise.all([listSandboxes(), client.runtime('listContainers', {})])
  return matchContainer(containers, items, ref, options)
}

/** Pure matching behind resolveContainer: every form it accepts (unit tested). */
export function matchContainer(
  containers: readonly Container[],
  sandboxes: readonly PodSandbox[],
  ref: string,
  options: ResolveOptions = {},
): Container {
  if (ref.includes('/')) {
    if (options.container !== undefined) {
      throw new UsageError(`"${ref}" names a container already; give either POD/CONTAINER or POD with --container ${options.container}`)
    }

    return matchContainerRef(containers, sandboxes, ref, options)
  }

  if (options.container === undefined && containers.some((c) => c.id.startsWith(ref))) return matchContainerId(containers, ref)
  return matchPodContainer(containers, sandboxes, ref, options)
}

/** The container kubectl would pick in pod `podRef`: the one named, the default-container annotation's, or the only one. */
function matchPodContainer(
  containers: readonly Container[],
  sandboxes: readonly PodSandbox[],
  podRef: string,
  options: ResolveOptions,
): Container {
  const pods = podsOrContainerNotFound(sandboxes, podRef, options)
  const ids = new Set(pods.map((pod) => pod.id))
  const own = containers.filter((c) => ids.has(c.podSandboxId)).sort(newestFirst)
  const named = (name: string) => own.find((c) => containerName(c) === name)
  const listHint = `list them with: podctl ps --pod ${podRef}${options.namespace ? ` -n ${options.namespace}` : ''} -a`
  const newest = pods[0]
  const current = [...new Set(own.filter((c) => c.podSandboxId === newest.id && !isInitContainer(c)).map(containerName))]
  if (options.container !== undefined) {
    const found = named(options.container)
    if (found) return found
    const names = [...new Set(own.map(containerName))]
    const has = names.length > 0 ? `its containers: ${names.join(', ')}` : 'it has no containers'
    throw new NotFoundError(`pod "${podRef}" has no container named "${options.container}" (${has}); ${listHint}`)
  }

  const annotated = newest.annotations?.[DEFAULT_CONTAINER_ANNOTATION]
  const chosen = annotated ? named(annotated) : current.length === 1 ? named(current[0]) : undefined
  if (chosen) return chosen
  if (current.length === 0) throw new NotFoundError(`pod "${podRef}" has no containers yet; ${listHint}`)
  throw new AmbiguousError(
    `pod "${podRef}" has ${current.length} containers (${current.join(', ')}): name one as ${podRef}/CONTAINER ` +
      `or with --container NAME; ${listHint}`,
  )
}

/** The pod's sandboxes; when there is no such pod either, the NotFound says both were looked for. */
function podsOrContainerNotFound(sandboxes: readonly PodSandbox[], ref: string, options: ResolveOptions): PodSandbox[] {
  try {
    return matchPodSandboxes(sandboxes, ref, options)
  } catch (error) {
    if (!(error instanceof NotFoundError) || options.container !== undefined || /it exists in/.test(error.message)) throw error
    const namespace = options.namespace ?? DEFAULT_NAMESPACE
    throw new NotFoundError(
      `container "${ref}" not found: no container ID starts with it and no pod has that name in namespace "${namespace}"; ` +
        'list containers with: podctl ps -a',
    )
  }
}

function containerName(container: Container): string {
  return container.metadata?.name || container.labels[ContainerLabel.name] || ''
}

function isInitContainer(container: Container): boolean {
  return container.annotations?.[PodctlAnnotation.containerType] === 'init'
}

/** Pure matching behind resolveContainer, for callers that listed already (unit tested). */
export function matchContainerRef(
  containers: readonly Container[],
  sandboxes: readonly PodSandbox[],
  ref: string,
  options: ResolveOptions = {},
): Container {
  const slash = ref.indexOf('/')
  if (slash === -1) return matchContainerId(containers, ref)
  const [podRef, name] = [ref.slice(0, slash), ref.slice(slash + 1)]
  if (!podRef || !name) throw new UsageError(`container reference "${ref}" must be POD/CONTAINER or a container ID prefix`)
  const pods = matchPodSandboxes(sandboxes, podRef, options)
  const ids = new Set(pods.map((pod) => pod.id))
  const matches = containers
    .filter((c) => ids.has(c.podSandboxId) && (c.metadata?.name === name || c.labels[ContainerLabel.name] === name))
    .sort(newestFirst)
  if (matches.length === 0) throw new NotFoundError(`pod "${podRef}" has no container named "${name}"; see: podctl ps --pod ${podRef} -a`)
  return matches[0]
}

/** Pure matching of a container ID prefix (unit tested). */
export function matchContainerId(containers: readonly Container[], ref: string): Container {
  if (ref.trim() === '') throw new UsageError('container reference is empty; give a container ID prefix or POD/CONTAINER')
  const matches = containers.filter((c) => c.id.startsWith(ref))
  if (matches.length === 1) return matches[0]
  if (matches.length === 0) throw new NotFoundError(`container "${ref}" not found; list containers with: podctl ps -a`)
  const list = matches.map((c) => `${shortId(c.id)} (${c.metadata?.name})`).join(', ')
  throw new AmbiguousError(`container ID prefix "${ref}" matches ${matches.length} containers: ${list}; give more characters`)
}
