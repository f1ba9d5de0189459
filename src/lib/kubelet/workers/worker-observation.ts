/**
 * What a pod worker (pod-worker.ts) is handed by each listing, and what it reads from it: whether
 * anything changed since its last look, and which running containers failed a liveness or startup probe.
 */
import type {Container, PodSandbox} from '../../../generated/runtime/v1/api.js'
import type {StatusProber} from '../status/status-manager.js'

/** What one listing saw of the pod: no sandboxes (and no lostUid) means the pod is gone from the runtime. */
export interface Observation {
  /** Newest first. */
  sandboxes: PodSandbox[]
  /** The containers of those sandboxes. */
  containers: Container[]
  /** Epoch ms: when the listing began. */
  listedAt: number
  /** The pod is recorded but the runtime lost it (lost-pods.ts): its record's uid, to bring it back. */
  lostUid?: string
}

/** What changed in one pod since the last look: its sandboxes' and containers' IDs and states. */
export function fingerprint(sandboxes: readonly PodSandbox[], containers: readonly Container[]): string {
  const parts = [...sandboxes.map((s) => `${s.id}:${s.state}`), ...containers.map((c) => `${c.id}:${c.state}`)]
  return parts.sort().join(',')
}

export function probeFailuresOf(prober: StatusProber, containers: readonly Container[]): Map<string, 'liveness' | 'startup'> {
  const failures = new Map<string, 'liveness' | 'startup'>()
  for (const container of containers) {
    if (container.state !== 'CONTAINER_RUNNING') continue
    if (prober.result(container.id, 'startup') === 'failure') failures.set(container.id, 'startup')
    else if (prober.result(container.id, 'liveness') === 'failure') failures.set(container.id, 'liveness')
  }

  return failures
}
