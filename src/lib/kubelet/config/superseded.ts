/**
 * The pods a workload's new template replaces. A replica's name comes from its workload, template hash
 * and index (manifest/workload-names.ts), so a changed template names new pods; the pods recorded for
 * the same workload (its kind, name and namespace: the record's owner) under names the manifest no
 * longer has are superseded. Each is paired with the new pod of its replica index, so a rollout can
 * start the new replica and then terminate the old one, one replica after another, as a Deployment's
 * rolling update does; old pods beyond the new replica count (scaled down) have no successor.
 */
import {podFullName} from '../../kube/helpers.js'
import type {PodModel} from '../../manifest/model.js'

export interface Rollout {
  /** The workload, for messages: "Deployment web". */
  workload: string
  namespace: string
  /** The manifest's pods of the workload, in replica order, each with the recorded pod it replaces (if any). */
  steps: Array<{pod: PodModel; replaces?: PodModel}>
  /** Recorded pods of the workload that no new pod replaces (the workload has fewer replicas now). */
  leftover: PodModel[]
}

function workloadKey(pod: PodModel): string | undefined {
  return pod.owner ? `${pod.namespace}/${pod.owner.kind}/${pod.owner.name}` : undefined
}

/**
 * One rollout per workload of `desired` that has recorded pods the manifest no longer names; a
 * workload whose recorded pods are exactly the manifest's has none.
 */
export function rollouts(desired: readonly PodModel[], recorded: readonly PodModel[]): Rollout[] {
  const wanted = new Set(desired.map((pod) => podFullName(pod.name, pod.namespace)))
  const old = new Map<string, PodModel[]>()
  for (const pod of recorded) {
    const key = workloadKey(pod)
    if (key === undefined || wanted.has(podFullName(pod.name, pod.namespace))) continue
    old.set(key, [...(old.get(key) ?? []), pod])
  }

  const out: Rollout[] = []
  const seen = new Set<string>()
  for (const pod of desired) {
    const key = workloadKey(pod)
    if (key === undefined || seen.has(key) || !old.has(key)) continue
    seen.add(key)
    const pods = desired.filter((candidate) => workloadKey(candidate) === key)
    const superseded = [...old.get(key)!].sort((a, b) => (a.owner?.replica ?? 0) - (b.owner?.replica ?? 0))
    const steps = pods.map((next) => ({pod: next, replaces: takeReplica(superseded, next.owner?.replica)}))
    out.push({workload: `${pod.owner!.kind} ${pod.owner!.name}`, namespace: pod.namespace, steps, leftover: superseded})
  }

  return out
}

/** The superseded pod of the same replica index (else the first left), taken out of the list. */
function takeReplica(superseded: PodModel[], replica: number | undefined): PodModel | undefined {
  const index = superseded.findIndex((pod) => pod.owner?.replica === replica)
  const at = index === -1 ? 0 : index
  return superseded.splice(at, 1)[0]
}
