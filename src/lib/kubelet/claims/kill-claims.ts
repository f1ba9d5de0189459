/**
 * `kill --delete-claims`: the claims of the pods killed lose their data, on request only. The
 * claims are read from each pod's record before the kill drops it; after the kill, a claim that a
 * running pod still uses (by its record) is kept, saying which pod, and only a directory exactly
 * at <claims root>/<namespace>/<claim> is ever removed.
 */
import type {CriClient} from '../../cri/client.js'
import {podFullName} from '../../kube/helpers.js'
import type {PodModel} from '../../manifest/model.js'
import {readDesiredPod} from '../config/desired-state.js'
import {claimHostPath, isClaimVolume, removeClaim} from '../volumes/claims.js'

export interface PodClaim {
  namespace: string
  name: string
  path: string
  /** The pod (name_namespace) it was read from. */
  pod: string
}

export interface ClaimDeletion {
  removed: PodClaim[]
  /** Claims left, with why (used by a running pod, or outside the claims root); a claim already gone is neither. */
  kept: Array<{claim: PodClaim; reason: string}>
}

function claimsOf(pod: PodModel): PodClaim[] {
  return pod.volumes.filter(isClaimVolume).map((volume) => ({
    namespace: pod.namespace,
    name: volume.persistentVolumeClaim!.claimName,
    path: claimHostPath(pod, volume),
    pod: podFullName(pod.name, pod.namespace),
  }))
}

/** The claims the recorded pods of these sandboxes use (each claim once), read before they are killed. */
export async function claimsOfPods(
  podDirRoot: string,
  pods: ReadonlyArray<{sandboxes: ReadonlyArray<{metadata?: {uid: string}}>}>,
  runtime?: string,
): Promise<PodClaim[]> {
  const out = new Map<string, PodClaim>()
  for (const pod of pods) {
    const uids = new Set(pod.sandboxes.flatMap((sandbox) => (sandbox.metadata ? [sandbox.metadata.uid] : [])))
    for (const uid of uids) {
      const recorded = await readDesiredPod(podDirRoot, uid, runtime).catch(() => undefined)
      for (const claim of recorded ? claimsOf(recorded) : []) if (!out.has(claim.path)) out.set(claim.path, claim)
    }
  }

  return [...out.values()]
}

/** Claim path → the running pods (name_namespace, comma-separated) whose records use it. */
export async function claimUsers(client: CriClient, podDirRoot: string): Promise<Map<string, string>> {
  const {items} = await client.runtime('listPodSandbox', {})
  const ready = items.filter((sandbox) => sandbox.state === 'SANDBOX_READY')
  const users = new Map<string, string>()
  for (const uid of new Set(ready.flatMap((sandbox) => (sandbox.metadata ? [sandbox.metadata.uid] : [])))) {
    const recorded = await readDesiredPod(podDirRoot, uid, client.runtimeEndpoint).catch(() => undefined)
    for (const claim of recorded ? claimsOf(recorded) : []) {
      const others = users.get(claim.path)
      users.set(claim.path, others && others !== claim.pod ? `${others}, ${claim.pod}` : claim.pod)
    }
  }

  return users
}

/** Removes each claim's data unless a running pod uses it or it is not under `claimsRoot`. */
export async function deleteClaims(
  client: CriClient,
  claims: readonly PodClaim[],
  settings: {podDirRoot: string; claimsRoot: string},
): Promise<ClaimDeletion> {
  const result: ClaimDeletion = {removed: [], kept: []}
  if (claims.length === 0) return result
  const users = await claimUsers(client, settings.podDirRoot)
  for (const claim of claims) {
    const user = users.get(claim.path)
    if (user) {
      result.kept.push({claim, reason: `in use by pod ${user}`})
      continue
    }

    const outcome = await removeClaim(settings.claimsRoot, claim.namespace, claim.name, claim.path)
    if (outcome === 'removed') result.removed.push(claim)
    else if (outcome === 'outside') {
      result.kept.push({claim, reason: `${claim.path} is not under --claims-root ${settings.claimsRoot}; left alone`})
    }
  }

  return result
}
