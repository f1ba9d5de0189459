import type {CriClient} from '../cri/client.js'
import {AmbiguousError, NotFoundError, UsageError} from '../errors.js'
import type {Container, PodSandbox} from '../../generated/runtime/v1/api.js'
import {DEFAULT_NAMESPACE, podFullName, shortId} from '../kube/helpers.js'
import {ContainerLabel} from '../kube/labels.js'
import {newestFirst} from './pods.js'

/**
 * Turns what users type into runtime objects. Everywhere a pod is expected podctl accepts a
 * sandbox ID prefix, a pod name (in --namespace, default "default"), or the kubelet's full name
 * `name_namespace`; a container is an ID prefix or `POD/CONTAINER`. An ambiguous prefix is an
 * error that lists the matches.
 */
export interface ResolveOptions {
  namespace?: string
}

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

/** One container from an ID prefix or `POD/CONTAINER` (newest attempt). */
export async function resolveContainer(client: CriClient, ref: string, options: ResolveOptions = {}): Promise<Container> {
  if (!ref.includes('/')) {
    const {containers} = await client.runtime('listContainers', {})
    return matchContainerId(containers, ref)
  }

  const [{items}, {containers}] = await Promise.all([client.runtime('listPodSandbox', {}), client.runtime('listContainers', {})])
  return matchContainerRef(containers, items, ref, options)
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
