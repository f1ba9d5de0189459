/**
 * Choosing the pods a bulk command (kill) acts on, from ONE ListPodSandbox: pod references
 * (name with --namespace, name_namespace, sandbox ID prefix), a label selector, or --all, each
 * restricted by --namespace. A pod is all sandboxes (attempts) sharing name and namespace.
 */
import type {CriClient} from '../cri/client.js'
import {NotFoundError, PodctlError, UsageError} from '../errors.js'
import {nameMatcher} from '../util/filters.js'
import type {Container, PodSandbox} from '../../generated/runtime/v1/api.js'
import {podFullName} from '../kube/helpers.js'
import {isPodctlSandbox} from '../kube/ownership.js'
import {newestFirst} from './pods.js'
import {matchPodSandboxes} from './resolve.js'

export interface PodSelection {
  refs: readonly string[]
  /** Exact, or a `*` glob for --all / --label; the namespace of bare names (default "default"). */
  namespace?: string
  labels?: Readonly<Record<string, string>>
  all?: boolean
  /** kill -f: workloads' pods, found by their labels and the form of their names (each is NotFound when none runs). */
  workloads?: readonly WorkloadSelector[]
  /**
   * --all, --label and -f's workloads choose only sandboxes podctl made (kube/ownership.ts); the
   * pods of other tools are left alone and named in `leftAlone`. A pod named by reference is chosen
   * whatever made it: that is the user's call. crictl's commands choose every pod.
   */
  onlyPodctl?: boolean
}

/** A workload's pods as the manifest describes them (manifest/workload-names.ts WorkloadMatch). */
export interface WorkloadSelector {
  kind: string
  name: string
  /** The manifest's; else --namespace, else "default". */
  namespace?: string
  labels: Readonly<Record<string, string>>
  podName: RegExp
}

export interface SelectedPod {
  /** name_namespace */
  fullName: string
  /** Every attempt, newest first. */
  sandboxes: PodSandbox[]
}

export interface SelectionOutcome {
  pods: SelectedPod[]
  /** References that matched nothing (NotFound) or too much (Ambiguous), in input order. */
  failures: Array<{ref: string; error: PodctlError}>
  /** Pods (name_namespace) --all, --label or -f matched but `choosable` refused, sorted. */
  leftAlone?: string[]
}

/** Refuses selections that mix modes or select nothing; a usage error names the flags. */
export function validateSelection(selection: PodSelection): void {
  const labels = Object.keys(selection.labels ?? {}).length > 0
  if (selection.refs.length > 0 && selection.all) {
    throw new UsageError('give either POD names or --all, not both; --all -n NAMESPACE kills every pod of one namespace')
  }

  if (selection.refs.length > 0 && labels) throw new UsageError('give either POD names or --label, not both')
  if (selection.all && labels) throw new UsageError('give either --all or --label, not both')
  const workloads = (selection.workloads?.length ?? 0) > 0
  if (workloads && (selection.all || labels)) throw new UsageError('give either -f FILE or --all/--label, not both')
  if (selection.refs.length === 0 && !selection.all && !labels && !workloads) {
    throw new UsageError('no pods given; name them (POD, name_namespace or sandbox ID prefix), or use --label KEY=VALUE or --all')
  }
}

export function selectPods(sandboxes: readonly PodSandbox[], selection: PodSelection): SelectionOutcome {
  validateSelection(selection)
  if (selection.refs.length === 0 && !selection.workloads?.length) {
    const matchNamespace = nameMatcher(selection.namespace)
    const labels = Object.entries(selection.labels ?? {})
    const matched = sandboxes.filter(
      (sandbox) => matchNamespace(sandbox.metadata?.namespace ?? '') && labels.every(([key, value]) => sandbox.labels[key] === value),
    )
    return chooseFrom(matched, selection.onlyPodctl ? isPodctlSandbox : undefined)
  }

  const pods = new Map<string, SelectedPod>()
  const failures: SelectionOutcome['failures'] = []
  for (const ref of selection.refs) {
    try {
      const found = matchPodSandboxes(sandboxes, ref, {namespace: selection.namespace})
      const fullName = podFullName(found[0].metadata?.name ?? '', found[0].metadata?.namespace ?? '')
      if (!pods.has(fullName)) pods.set(fullName, {fullName, sandboxes: found})
    } catch (error) {
      if (!(error instanceof PodctlError) || error instanceof UsageError) throw error
      failures.push({ref, error})
    }
  }

  const choosable = selection.onlyPodctl ? isPodctlSandbox : () => true
  const allowed = sandboxes.filter((sandbox) => choosable(sandbox))
  for (const workload of selection.workloads ?? []) selectWorkloadPods(allowed, workload, selection.namespace, {pods, failures})
  const refused = sandboxes.filter((sandbox) => !choosable(sandbox))
  const leftAlone = (selection.workloads ?? []).flatMap((workload) => workloadPods(refused, workload, selection.namespace))
  return {pods: [...pods.values()], failures, ...namedLeftAlone(leftAlone, pods)}
}

/** The pods of `matched` whose sandboxes `choosable` accepts; the others named as left alone. */
function chooseFrom(matched: readonly PodSandbox[], choosable: ((sandbox: PodSandbox) => boolean) | undefined): SelectionOutcome {
  if (!choosable) return {pods: groupByPod(matched), failures: []}
  const pods = groupByPod(matched.filter((sandbox) => choosable(sandbox)))
  const refused = groupByPod(matched.filter((sandbox) => !choosable(sandbox)))
  return {pods, failures: [], ...namedLeftAlone(refused, new Map(pods.map((pod) => [pod.fullName, pod])))}
}

/** `leftAlone` for an outcome: the refused pods' names (those not chosen through another sandbox), sorted; absent when none. */
function namedLeftAlone(refused: readonly SelectedPod[], chosen: ReadonlyMap<string, SelectedPod>): {leftAlone?: string[]} {
  const names = [...new Set(refused.map((pod) => pod.fullName))].filter((name) => !chosen.has(name)).sort()
  return names.length > 0 ? {leftAlone: names} : {}
}

/** kill -f's workloads: their pods join `pods`; a workload none of whose pods runs is NotFound. */
function selectWorkloadPods(
  sandboxes: readonly PodSandbox[],
  workload: WorkloadSelector,
  namespace: string | undefined,
  into: {pods: Map<string, SelectedPod>; failures: SelectionOutcome['failures']},
): void {
  const found = workloadPods(sandboxes, workload, namespace)
  for (const pod of found) if (!into.pods.has(pod.fullName)) into.pods.set(pod.fullName, pod)
  if (found.length > 0) return
  const where = workload.namespace ?? namespace ?? 'default'
  const error = new NotFoundError(`${workload.kind} ${workload.name}: no pod of it in namespace "${where}"`)
  into.failures.push({ref: `${workload.kind}/${workload.name}`, error})
}

/** A workload's pods: in its namespace, with every label it gives its pods and a name of the form its controller makes. */
export function workloadPods(sandboxes: readonly PodSandbox[], workload: WorkloadSelector, namespace?: string): SelectedPod[] {
  const wanted = workload.namespace ?? namespace ?? 'default'
  const labels = Object.entries(workload.labels)
  return groupByPod(
    sandboxes.filter(
      (sandbox) =>
        sandbox.metadata?.namespace === wanted &&
        workload.podName.test(sandbox.metadata?.name ?? '') &&
        labels.every(([key, value]) => sandbox.labels[key] === value),
    ),
  )
}

/** Sandboxes grouped into pods by name and namespace; the pod with the newest sandbox first. */
export function groupByPod(sandboxes: readonly PodSandbox[]): SelectedPod[] {
  const pods = new Map<string, SelectedPod>()
  for (const sandbox of [...sandboxes].sort(newestFirst)) {
    const fullName = podFullName(sandbox.metadata?.name ?? '', sandbox.metadata?.namespace ?? '')
    const pod = pods.get(fullName)
    if (pod) pod.sandboxes.push(sandbox)
    else pods.set(fullName, {fullName, sandboxes: [sandbox]})
  }

  return [...pods.values()]
}

/**
 * The pods a bulk command acts on, read from the runtime: one ListPodSandbox (filtered by the
 * selection's labels) and one ListContainers, concurrently. The containers come back too, so
 * killing every selected pod needs no further listing.
 */
export async function selectPodsFromRuntime(
  client: CriClient,
  selection: PodSelection,
): Promise<SelectionOutcome & {containers: Container[]}> {
  const [selected, {containers}] = await Promise.all([
    selectSandboxesFromRuntime(client, selection),
    client.runtime('listContainers', {filter: {}}),
  ])
  return {...selected, containers}
}

/** The selection from one ListPodSandbox alone: for a supervisor, whose loop lists the containers itself. */
export async function selectSandboxesFromRuntime(client: CriClient, selection: PodSelection): Promise<SelectionOutcome> {
  validateSelection(selection)
  const {items: sandboxes} = await client.runtime('listPodSandbox', {filter: {labelSelector: {...selection.labels}}})
  return selectPods(sandboxes, selection)
}

/** The note for pods a bulk selection left alone: "left alone 2 pods podctl did not make (a_ns, b_ns); …". */
export function leftAloneNote(pods: readonly string[], verb: string): string {
  const shown = pods.length > 5 ? `${pods.slice(0, 5).join(', ')} and ${pods.length - 5} more` : pods.join(', ')
  const noun = pods.length === 1 ? 'pod' : 'pods'
  return `left alone ${pods.length} ${noun} podctl did not make (${shown}); name a pod to ${verb} it`
}

/** What an --all or --label selection that chose nothing says: `no pods with label a=b in namespace "ci"`. */
export function nothingSelected(selection: Pick<PodSelection, 'all' | 'labels' | 'namespace'>): string {
  const where = selection.namespace === undefined ? '' : ` in namespace "${selection.namespace}"`
  const labels = Object.entries(selection.labels ?? {}).map(([key, value]) => `${key}=${value}`)
  return `${selection.all ? 'no pods' : `no pods with label ${labels.join(',')}`}${where}`
}
