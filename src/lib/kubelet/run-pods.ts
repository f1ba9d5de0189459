/**
 * What `run` needs around SyncPod (kubelet/sync-pod.ts) when it starts several pods: the
 * sandboxes that already exist for them, found by full name (name_namespace) in one listing, and
 * the outcome of a pod whose run threw before its own steps could report.
 */
import type {CriClient} from '../cri/client.js'
import type {PodctlError} from '../errors.js'
import {podFullName} from '../kube/helpers.js'
import type {PodModel} from '../manifest/model.js'
import type {PodSandbox} from '../../generated/runtime/v1/api.js'
import type {PodRunOutcome} from './sync-pod.js'

/** One ListPodSandbox for all pods: name_namespace → its sandboxes (pods without any are absent). */
export async function sandboxesByFullName(
  client: CriClient,
  pods: ReadonlyArray<{name: string; namespace: string}>,
): Promise<Map<string, PodSandbox[]>> {
  const wanted = new Set(pods.map((pod) => podFullName(pod.name, pod.namespace)))
  const {items} = await client.runtime('listPodSandbox', {})
  const found = new Map<string, PodSandbox[]>()
  for (const sandbox of items) {
    const key = podFullName(sandbox.metadata?.name ?? '', sandbox.metadata?.namespace ?? '')
    if (wanted.has(key)) found.set(key, [...(found.get(key) ?? []), sandbox])
  }

  return found
}

/** A bug or a failure outside the pod's own steps: the pod's outcome says so, and the other pods go on. */
export function failedOutcome(pod: PodModel, failure: PodctlError): PodRunOutcome {
  return {
    failure,
    result: {
      pod: pod.name,
      namespace: pod.namespace,
      uid: pod.uid,
      sandboxId: null,
      attempt: 0,
      ip: null,
      containers: [],
      phase: null,
      logDirectory: '',
      exitCode: null,
      rolledBack: false,
      removed: false,
      error: failure.toJSON(),
    },
  }
}
