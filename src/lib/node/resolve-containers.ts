/**
 * Several container references at once (start, stop, rm, update): every reference is an ID prefix
 * or POD/CONTAINER as resolve.ts reads it, matched against ONE ListContainers (and one
 * ListPodSandbox when a reference names a pod, or --all is restricted to a namespace). A reference
 * that matches nothing or too much is a failure of its own; the others go on.
 */
import type {CriClient} from '../cri/client.js'
import {PodctlError, UsageError} from '../errors.js'
import {nameMatcher} from '../util/filters.js'
import type {Container, PodSandbox} from '../../generated/runtime/v1/api.js'
import {PodLabel} from '../kube/labels.js'
import {isPodctlContainer} from '../kube/ownership.js'
import {newestFirst} from './pods.js'
import {matchContainerRef} from './resolve.js'

export interface ContainerRefs {
  refs: readonly string[]
  /** Namespace of the pods named in POD/CONTAINER (default "default"); with all, only containers of pods there (exact or a `*` glob). */
  namespace?: string
  /** Every container (in the given states), instead of refs. */
  all?: boolean
  /** With all: only containers in these states (default: every state). */
  states?: ReadonlyArray<'CONTAINER_CREATED' | 'CONTAINER_RUNNING' | 'CONTAINER_EXITED' | 'CONTAINER_UNKNOWN'>
  /**
   * With all: only containers podctl made (kube/ownership.ts); the others are counted in
   * `leftAlone`. A container named by reference is the user's call. crictl's rm and stop choose every one.
   */
  onlyPodctl?: boolean
}

export interface ResolvedContainers {
  /** In the order named (each once), or newest first with all. */
  containers: Container[]
  failures: Array<{ref: string; error: PodctlError}>
  /** With all and onlyPodctl: how many containers matched but were not podctl's (absent when none). */
  leftAlone?: number
}

/** Refuses what cannot be resolved before any call: refs with --all, or neither. */
export function checkContainerRefs(selection: ContainerRefs, what = 'containers'): void {
  if (selection.all && selection.refs.length > 0) throw new UsageError(`give either CONTAINER references or --all, not both`)
  if (!selection.all && selection.refs.length === 0) {
    throw new UsageError(`no ${what} given; name them (container ID prefix or POD/CONTAINER), or use --all`)
  }
}

export async function resolveContainers(client: CriClient, selection: ContainerRefs): Promise<ResolvedContainers> {
  checkContainerRefs(selection)
  const needPods = selection.refs.some((ref) => ref.includes('/')) || (selection.all && selection.namespace !== undefined)
  const [{containers}, sandboxes] = await Promise.all([
    client.runtime('listContainers', {filter: {}}),
    needPods ? client.runtime('listPodSandbox', {}).then((response) => response.items) : Promise.resolve([] as PodSandbox[]),
  ])
  return matchContainers(containers, sandboxes, selection)
}

/** Pure half of resolveContainers (unit tested). */
export function matchContainers(
  containers: readonly Container[],
  sandboxes: readonly PodSandbox[],
  selection: ContainerRefs,
): ResolvedContainers {
  if (selection.all) {
    const matchNamespace = nameMatcher(selection.namespace)
    const byId = new Map(sandboxes.map((sandbox) => [sandbox.id, sandbox]))
    const namespaceOf = (container: Container) =>
      byId.get(container.podSandboxId)?.metadata?.namespace ?? container.labels[PodLabel.namespace] ?? ''
    const matched = containers.filter(
      (container) =>
        (selection.states === undefined || (selection.states as readonly string[]).includes(container.state)) &&
        (selection.namespace === undefined || matchNamespace(namespaceOf(container))),
    )
    const chosen = selection.onlyPodctl ? matched.filter((container) => isPodctlContainer(container)) : matched
    const leftAlone = matched.length - chosen.length
    return {containers: [...chosen].sort(newestFirst), failures: [], ...(leftAlone > 0 ? {leftAlone} : {})}
  }

  const found = new Map<string, Container>()
  const failures: ResolvedContainers['failures'] = []
  for (const ref of selection.refs) {
    try {
      const container = matchContainerRef(containers, sandboxes, ref, {namespace: selection.namespace})
      if (!found.has(container.id)) found.set(container.id, container)
    } catch (error) {
      if (!(error instanceof PodctlError) || error instanceof UsageError) throw error
      failures.push({ref, error})
    }
  }

  return {containers: [...found.values()], failures}
}

/** The note for containers `--all` left alone: "left alone 3 containers podctl did not make; …". */
export function containersLeftAloneNote(count: number, verb: string): string {
  return `left alone ${count} container${count === 1 ? '' : 's'} podctl did not make; name a container to ${verb} it`
}
