/**
 * Pods the runtime lost: recorded here for this runtime (record-owner.ts) with no sandbox left in it —
 * a reboot wiped containerd's state, or `crictl rmp` removed the sandbox behind podctl's back. The
 * record is what should run, as a static pod's manifest is for the kubelet: `sync` (and the supervisor
 * on every listing) brings such a pod back in a new sandbox with attempt + 1 and its pod directory,
 * disk emptyDirs and claims kept (kuberuntime/sync-pod.ts lostPodSuccessor). Only `podctl kill` removes a record.
 */
import {recordsMissingFrom} from '../records/gone-pods.js'
import {matchRecords, type RecordSelection} from '../records/kill-records.js'
import type {SyncTarget} from './sync-pods.js'

export interface Selected {
  pods: SyncTarget[]
  /** References the runtime's listing matched nothing for. */
  failures: Array<{ref: string; error: unknown}>
}

export interface LostPodsOptions {
  podDirRoot: string
  runtime: string | undefined
  selection: RecordSelection
}

/**
 * The listing's selection plus the selected pods the runtime lost, as targets with no sandboxes and
 * the recorded uid; a reference that names a lost pod is no longer a failure. Only the pod directories
 * of uids the listing lacks are read.
 */
export async function withLostPods<T extends Selected>(selected: T, {podDirRoot, runtime, selection}: LostPodsOptions): Promise<T> {
  const listed = new Set(selected.pods.map((target) => target.fullName))
  const live = new Set(selected.pods.flatMap((target) => target.sandboxes.map((sandbox) => sandbox.metadata?.uid ?? '')))
  const records = await recordsMissingFrom(podDirRoot, runtime, live)
  if (records.length === 0) return selected
  const refs = selection.refs.length > 0 ? selected.failures.map((failure) => failure.ref) : []
  if (selection.refs.length > 0 && refs.length === 0) return selected
  const found = matchRecords(records, {...selection, refs})
  const lost: SyncTarget[] = []
  for (const [fullName, pods] of found.pods) {
    // A pod of that name runs under another uid: that one is the pod; the older record is kill's to remove.
    if (listed.has(fullName)) continue
    lost.push({fullName, sandboxes: [], lostUid: pods[0].uid})
  }

  const named = new Set(found.matched.keys())
  return {...selected, pods: [...selected.pods, ...lost], failures: selected.failures.filter((failure) => !named.has(failure.ref))}
}
