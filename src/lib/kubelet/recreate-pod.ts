/**
 * A sandbox recreation of the same pod (`sync`: its sandbox died, or `sync -f` changed a field the
 * sandbox cannot take on), the kubelet's way (computePodActions → killPodWithSyncResult →
 * createPodSandbox with attempt + 1). The pod keeps its uid, so it keeps its directory: the data of
 * its emptyDir volumes (a medium Memory one stays mounted), its recorded pod and crash back-off;
 * configMap, secret, downwardAPI and projected volumes are written again in place, atomically.
 * The old sandboxes are only stopped until the new pod runs, then removed (the kubelet's garbage
 * collection); a failed recreation removes only what it made, so the pod is left as it was — a
 * stopped sandbox that the next `sync` recreates again. Sandboxes of another uid (a manifest that
 * names a new uid) belong to another pod: they go with their directory, as a deleted pod's do.
 */
import type {CriClient} from '../cri/client.js'
import type {PodSandbox} from '../../generated/runtime/v1/api.js'
import type {EventSink} from '../kube/events.js'
import {killPod} from './kill.js'

/** The sandboxes of the pod being recreated (same uid), kept stopped until the new one runs; undefined when there is none. */
export function sandboxesToReplace(existing: readonly PodSandbox[], uid: string): PodSandbox[] | undefined {
  const same = existing.filter((sandbox) => sandbox.metadata?.uid === uid)
  return same.length > 0 ? same : undefined
}

/** Kills the existing sandboxes for a recreation of pod `uid`: its own are only stopped, another pod's are removed with its directory. */
export async function killForRecreation(
  client: CriClient,
  existing: readonly PodSandbox[],
  uid: string,
  options: {events: EventSink; podDirRoot: string},
): Promise<void> {
  const others = existing.filter((sandbox) => sandbox.metadata?.uid !== uid)
  if (others.length > 0) await killPod(client, others, {events: options.events, podDirRoot: options.podDirRoot})
  const same = sandboxesToReplace(existing, uid)
  if (same) await killPod(client, same, {events: options.events, keep: true})
}

/**
 * Removes the stopped sandboxes (and their exited containers) a successful recreation replaced,
 * keeping the pod's directory. Best effort: one left behind is only an older attempt, which the
 * next recreation or `kill` removes.
 */
export async function removeReplacedSandboxes(client: CriClient, replaced: readonly PodSandbox[], podDirRoot: string): Promise<void> {
  if (replaced.length === 0) return
  await killPod(client, [...replaced], {keepPodDirectory: true, podDirRoot}).catch(() => {})
}
