/**
 * The kubelet's sandbox GC (kuberuntime_gc.go evictSandboxes), on podctl's sandboxes only (the
 * ownership proof, core/ownership.ts): sandboxes are grouped by pod UID; the newest of each pod
 * (attempt, then creation time) always stays while the pod exists, and an older one goes only when
 * it is inactive: not ready and holding no containers (of any tool). podctl has no API server to say
 * a pod was deleted, so a pod with any sandbox counts as existing: its newest sandbox stays.
 */
import type {CriClient} from '../../cri/client.js'
import {removePodCgroups} from '../core/pod-cgroup.js'
import {NotFoundError} from '../../errors.js'
import type {Container, PodSandbox} from '../../../generated/runtime/v1/api.js'
import {podFullName} from '../../kube/helpers.js'
import {compareNanosDesc} from '../../util/time.js'
import {type Ownership, sandboxOwnership} from '../../kube/ownership.js'
import {type GcRound, inRoundNamespace, removeDecided} from './round.js'

export interface CollectedSandbox {
  id: string
  /** name_namespace */
  pod: string
  podUid: string
  attempt: number
}

/** Newest first: higher attempt, then later creation (the kubelet's sandboxByAttempt). */
function byAttemptNewestFirst(a: PodSandbox, b: PodSandbox): number {
  const attempts = (b.metadata?.attempt ?? 0) - (a.metadata?.attempt ?? 0)
  return attempts || compareNanosDesc(a.createdAt, b.createdAt) || a.id.localeCompare(b.id)
}

/** Of podctl's sandboxes, those to remove, given the containers (of any tool) that remain once container GC is done. */
export function sandboxesToRemove(sandboxes: readonly PodSandbox[], remaining: readonly Container[]): PodSandbox[] {
  const holding = new Set(remaining.map((container) => container.podSandboxId))
  const byPod = new Map<string, PodSandbox[]>()
  for (const sandbox of sandboxes) {
    const uid = sandbox.metadata?.uid ?? ''
    byPod.set(uid, [...(byPod.get(uid) ?? []), sandbox])
  }

  return [...byPod.values()].flatMap((pod) =>
    [...pod]
      .sort(byAttemptNewestFirst)
      .slice(1)
      .filter((sandbox) => sandbox.state !== 'SANDBOX_READY' && !holding.has(sandbox.id)),
  )
}

export function describeSandbox(sandbox: PodSandbox): CollectedSandbox {
  const {name = '', namespace = '', uid = '', attempt = 0} = sandbox.metadata ?? {}
  return {id: sandbox.id, pod: podFullName(name, namespace), podUid: uid, attempt}
}

/** StopPodSandbox before RemovePodSandbox, as the kubelet guards against a sandbox never stopped. Gone counts as removed. */
export async function removeSandbox(client: CriClient, sandbox: PodSandbox, signal?: AbortSignal): Promise<CollectedSandbox> {
  const ignoreGone = (error: unknown) => {
    if (!(error instanceof NotFoundError)) throw error
  }

  await client.runtime('stopPodSandbox', {podSandboxId: sandbox.id}, {signal}).catch(ignoreGone)
  await client.runtime('removePodSandbox', {podSandboxId: sandbox.id}, {signal}).catch(ignoreGone)
  // What the runtime left of the sandbox's cgroup, and the pod's once empty (core/pod-cgroup.ts).
  await removePodCgroups(sandbox.metadata?.uid ?? '', [sandbox.id]).catch(() => [])
  return describeSandbox(sandbox)
}

/** The round's sandbox step: podctl's older, inactive sandboxes removed (described on a dry run); others' counted as left alone. */
export async function collectSandboxes(
  round: GcRound,
  listed: readonly PodSandbox[],
  remaining: readonly Container[],
): Promise<CollectedSandbox[]> {
  const owned = new Map<PodSandbox, Ownership>()
  for (const sandbox of listed.filter(inRoundNamespace(round))) {
    const owner = sandboxOwnership(sandbox, round.records)
    if (owner.ours) owned.set(sandbox, owner)
    else if (sandbox.state !== 'SANDBOX_READY') round.explanation.leftAlone('sandbox', owner.why)
  }

  const collected: CollectedSandbox[] = []
  for (const sandbox of sandboxesToRemove([...owned.keys()], remaining)) {
    const described = describeSandbox(sandbox)
    const why = `${owned.get(sandbox)!.why}; not ready, holds no container, and pod ${described.pod} has a newer sandbox`
    const decided = {kind: 'sandbox' as const, object: sandbox.id, why, failureName: `sandbox ${sandbox.id}`}
    if (await removeDecided(round, decided, () => removeSandbox(round.client, sandbox, round.signal))) collected.push(described)
  }

  return collected
}
