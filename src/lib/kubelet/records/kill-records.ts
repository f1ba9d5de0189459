/**
 * `kill` of pods the runtime no longer has but podctl still records for it (gone-pods.ts): a kill
 * means the pod is no longer wanted, so its record goes too — pod.json, which a supervisor follows
 * and from which `sync` restarts or recreates it, and the rest of its pod and log directories, as
 * the kubelet cleans up after a deleted pod. Only this runtime's records are ever touched.
 */
import type {CriClient} from '../../cri/client.js'
import {asPodctlError, type PodctlError, RuntimeError} from '../../errors.js'
import {DEFAULT_NAMESPACE, podFullName} from '../../kube/helpers.js'
import type {PodModel} from '../../manifest/model.js'
import {nameMatcher} from '../../util/filters.js'
import {lockPods, type PodLockOptions} from '../config/pod-lock.js'
import {goneFromRuntime, recordsOfRuntime, removePodRecord} from './gone-pods.js'
import type {KillPodResult} from '../kuberuntime/kill.js'

/** kill's selection as far as records can answer it: they know names, namespaces and labels, not sandbox IDs. */
export interface RecordSelection {
  /** References no sandbox matched: a name (in `namespace`, default "default") or name_namespace. */
  refs: readonly string[]
  /** Exact, or a `*` glob with --all / --label. */
  namespace?: string
  labels?: Readonly<Record<string, string>>
  all?: boolean
  /** kill -f's workloads (node/select.ts WorkloadSelector): their pods' namespace, labels and name form; matched as `<kind>/<name>`. */
  workloads?: ReadonlyArray<{kind: string; name: string; namespace?: string; labels: Readonly<Record<string, string>>; podName: RegExp}>
}

export interface GoneRecords {
  /** The records of each pod selected (one per uid), by full name. */
  pods: Map<string, PodModel[]>
  /** The pod (full name) each matching reference named. */
  matched: Map<string, string>
}

export interface RemoveGoneRecordsOptions {
  podDirRoot: string
  logsRoot: string
  /** Waiting for a pod's pass lock, held by a `run` or `sync` at work on it. */
  lock?: Pick<PodLockOptions, 'deadline' | 'signal' | 'onWait'>
  /** Each pod whose record was removed, as soon as it was. */
  onKilled?: (result: KillPodResult) => void
}

/**
 * Which of `records` the selection names, matched as resolve.ts matches sandboxes: a name in the
 * namespace, else name_namespace; kill -f's workloads by their pods' namespace, labels and name form.
 * No references, no workloads and neither --all nor labels selects nothing.
 */
export function matchRecords(records: readonly PodModel[], selection: RecordSelection): GoneRecords {
  const found: GoneRecords = {pods: new Map(), matched: new Map()}
  const add = (pod: PodModel) => {
    const fullName = podFullName(pod.name, pod.namespace)
    const known = found.pods.get(fullName) ?? []
    if (!known.includes(pod)) found.pods.set(fullName, [...known, pod])
    return fullName
  }

  for (const workload of selection.workloads ?? []) {
    const namespace = workload.namespace ?? selection.namespace ?? DEFAULT_NAMESPACE
    const wanted = Object.entries(workload.labels)
    for (const pod of records) {
      if (pod.namespace !== namespace || !workload.podName.test(pod.name)) continue
      if (wanted.every(([key, value]) => pod.labels?.[key] === value)) found.matched.set(`${workload.kind}/${workload.name}`, add(pod))
    }
  }

  const labels = Object.entries(selection.labels ?? {})
  if (selection.refs.length === 0) {
    if (!selection.all && labels.length === 0) return found
    const matchNamespace = nameMatcher(selection.namespace)
    for (const pod of records) if (matchNamespace(pod.namespace) && labels.every(([key, value]) => pod.labels?.[key] === value)) add(pod)
    return found
  }

  for (const ref of selection.refs) {
    const named = recordsNamed(records, ref, selection.namespace)
    for (const pod of named) found.matched.set(ref, add(pod))
  }

  return found
}

function recordsNamed(records: readonly PodModel[], ref: string, namespace: string | undefined): PodModel[] {
  const byName = (name: string, ns: string) => records.filter((pod) => pod.name === name && pod.namespace === ns)
  const found = byName(ref, namespace ?? DEFAULT_NAMESPACE)
  if (found.length > 0 || !ref.includes('_')) return found
  // Names cannot contain "_", so the split is exact (as for sandboxes).
  const [name, ns] = ref.split('_', 2)
  return namespace === undefined || namespace === ns ? byName(name, ns) : []
}

/** The records of this runtime the selection names that have no sandbox in it. */
export async function findGoneRecords(client: CriClient, podDirRoot: string, selection: RecordSelection): Promise<GoneRecords> {
  const records = await recordsOfRuntime(podDirRoot, client.runtimeEndpoint)
  if (records.length === 0) return {pods: new Map(), matched: new Map()}
  // Read before listing: a `run` creates its sandbox before it records the pod, so a record read here is seen live below.
  const {items} = await client.runtime('listPodSandbox', {})
  return matchRecords(goneFromRuntime(records, items), selection)
}

/**
 * Removes the records found, under the pods' pass locks (the lock a `run` holds while it creates
 * a pod and records it), each only if the runtime still has no sandbox of it: a pod started again
 * meanwhile is a failure (kill it again), not a record to pull from under its run.
 */
export async function removeGoneRecords(
  client: CriClient,
  found: GoneRecords,
  options: RemoveGoneRecordsOptions,
): Promise<{items: KillPodResult[]; failures: Array<{pod: string; error: PodctlError}>}> {
  const outcome: {items: KillPodResult[]; failures: Array<{pod: string; error: PodctlError}>} = {items: [], failures: []}
  if (found.pods.size === 0) return outcome
  const locks = await lockPods(options.podDirRoot, [...found.pods.keys()], options.lock)
  try {
    const {items: sandboxes} = await client.runtime('listPodSandbox', {})
    for (const [pod, records] of found.pods) {
      const started = performance.now()
      if (goneFromRuntime(records, sandboxes).length < records.length) {
        outcome.failures.push({pod, error: new RuntimeError(`pod ${pod} was started again while kill removed its record; kill it again`)})
        continue
      }

      try {
        for (const record of records) await removePodRecord(record, options)
      } catch (error) {
        outcome.failures.push({pod, error: asPodctlError(error)})
        continue
      }

      const result: KillPodResult = {
        pod,
        sandboxIds: [],
        containersStopped: 0,
        removed: true,
        recordOnly: true,
        durationMs: Math.round(performance.now() - started),
      }
      outcome.items.push(result)
      options.onKilled?.(result)
    }
  } finally {
    await locks.release()
  }

  return outcome
}
