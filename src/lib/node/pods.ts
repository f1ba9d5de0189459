import {CRI_CLIENT_VERSION, type CriClient} from '../cri/client.js'
import type {GroupCount} from '../cri/current-containers.js'
import {mapLimit, RUNTIME_CALLS_IN_FLIGHT} from '../util/concurrency.js'
import {exactFilters, exactNameHint, nameMatcher, prefixGlobs, takeNewest} from '../util/filters.js'
import type {PodSandbox, PodSandboxStatus} from '../../generated/runtime/v1/api.js'
import {newestFirst} from '../kube/helpers.js'
import {PodctlAnnotation} from '../kube/labels.js'
import {epochNanos} from '../util/time.js'
import {CRIO_RUNTIME_NAME, runtimeHandlerFromInfo} from './runtime-handler.js'

// The pod vocabulary read-side callers have always imported from here.
export {newestFirst, sandboxIps} from '../kube/helpers.js'

export interface PodListFilters {
  /** Exact, or a `*` glob. */
  name?: string
  namespace?: string
  /** Sent to the runtime as the label selector. */
  labels?: Record<string, string>
  state?: 'ready' | 'notready'
  /** Sandbox ID prefix. */
  id?: string
  latest?: boolean
  last?: number
}

export interface PodListEntry {
  sandbox: PodSandbox
  containers: {running: number; total: number}
  /** Filled only when asked for (needs one PodSandboxStatus per pod). */
  status?: PodSandboxStatus
  /** A ready pod whose kill is under way (options.killRecorded says so); only with that option. */
  terminating?: boolean
  /**
   * With the status: the runtime handler ("" the default); undefined when the runtime does not say
   * (runtime-handler.ts: CRI-O reports it only in the verbose status, which is asked for on CRI-O alone).
   */
  runtimeHandler?: string
}

export interface PodListOptions {
  /** One PodSandboxStatus per pod (IPs). */
  withStatus?: boolean
  /** Sandboxes without labels and annotations (cri/summaries.ts): for tables and names, which show neither. */
  summaries?: boolean
  /**
   * Count each pod's containers (one ListContainers: at 5000 pods four times the bytes of
   * ListPodSandbox). True unless false: only a table shows the counts, so JSON, YAML, names and IDs skip it.
   */
  countContainers?: boolean
  /** Whether a kill of the pod with this uid is recorded: a ready pod with one is marked terminating. */
  killRecorded?: (uid: string) => boolean
}

/**
 * One ListPodSandbox and, unless countContainers is false, one ListContainers, concurrently: never a
 * call per pod (crictl and nerdctl's N+1 patterns are what make them slow on busy nodes). The
 * containers are only counted per sandbox, all and running, never decoded
 * (client.countContainersBySandbox); without the count every entry says 0/0.
 */
const NO_COUNTS: ReadonlyMap<string, GroupCount> = new Map()

/** Where `run` records a container's kind: init containers are left out of the counts, sidecars kept. */
const CONTAINER_KIND_KEYS = {type: PodctlAnnotation.containerType, init: 'init', sidecar: PodctlAnnotation.sidecar}

export async function listPods(client: CriClient, filters: PodListFilters, options: PodListOptions = {}): Promise<PodListEntry[]> {
  const state = filters.state === undefined ? undefined : {state: filters.state === 'ready' ? 'SANDBOX_READY' : 'SANDBOX_NOTREADY'}
  const request = {filter: {labelSelector: filters.labels ?? {}, state: state as {state: PodSandbox['state']} | undefined}}
  const [sandboxes, containers] = await Promise.all([
    options.summaries ? client.listSummaries('listPodSandbox', request) : client.runtime('listPodSandbox', request),
    options.countContainers === false ? NO_COUNTS : client.countContainersBySandbox({filter: {}}, CONTAINER_KIND_KEYS),
  ])

  // CRI-O 1.26 may send a sandbox's created_at in seconds (epochNanos reads it by its magnitude).
  for (const sandbox of sandboxes.items) sandbox.createdAt = epochNanos(sandbox.createdAt)
  const matchName = nameMatcher(filters.name)
  const matchNamespace = nameMatcher(filters.namespace)
  const selected = sandboxes.items
    .filter(
      (pod) =>
        matchName(pod.metadata?.name ?? '') &&
        matchNamespace(pod.metadata?.namespace ?? '') &&
        (filters.id === undefined || pod.id.startsWith(filters.id)),
    )
    .sort(newestFirst)
  const pods = takeNewest(selected, filters)

  const entries: PodListEntry[] = pods.map((sandbox) => {
    const counts = containers.get(sandbox.id)
    const entry: PodListEntry = {sandbox, containers: {running: counts?.matching ?? 0, total: counts?.total ?? 0}}
    if (options.killRecorded) entry.terminating = killUnderWay(options.killRecorded, sandbox)
    return entry
  })
  if (options.withStatus) await addStatuses(client, entries)
  return entries
}

/**
 * A ready sandbox whose pod has a kill recorded: the kill is under way (its grace period running, or
 * left for the next look to finish), so the pod is Terminating as kubectl shows it, not Ready.
 */
function killUnderWay(killRecorded: (uid: string) => boolean, sandbox: PodSandbox): boolean {
  const uid = sandbox.metadata?.uid ?? ''
  return sandbox.state === 'SANDBOX_READY' && uid !== '' && killRecorded(uid)
}

/** One PodSandboxStatus per pod; verbose only on CRI-O, whose handler is named there alone (a spec per pod). */
async function addStatuses(client: CriClient, entries: PodListEntry[]): Promise<void> {
  const verbose = entries.length > 0 && (await isCrio(client))
  await mapLimit(entries, RUNTIME_CALLS_IN_FLIGHT, async (entry) => {
    const response = await client.runtime('podSandboxStatus', {podSandboxId: entry.sandbox.id, verbose})
    entry.status = response.status
    entry.runtimeHandler = verbose ? runtimeHandlerFromInfo(response.info) : entry.sandbox.runtimeHandler
    if (response.status) response.status.createdAt = epochNanos(response.status.createdAt)
  })
}

async function isCrio(client: CriClient): Promise<boolean> {
  const version = await client.runtime('version', {version: CRI_CLIENT_VERSION}).catch(() => undefined)
  return version?.runtimeName === CRIO_RUNTIME_NAME
}

/**
 * After an empty list: the hint that --name or --namespace match whole names only, given only when
 * their prefix globs list some pod (with the other filters as they were); undefined otherwise.
 */
export async function podsNameHint(client: CriClient, filters: PodListFilters): Promise<string | undefined> {
  const names = {name: filters.name, namespace: filters.namespace}
  if (exactFilters(names).length === 0) return undefined
  const found = await listPods(client, {...filters, ...prefixGlobs(names)}, {summaries: true, countContainers: false})
  return found.length > 0 ? exactNameHint(names) : undefined
}
