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
import type {CriClient} from '../../cri/client.js'
import {asPodctlError, type PodctlError} from '../../errors.js'
import type {PodSandbox} from '../../../generated/runtime/v1/api.js'
import type {BackOff} from '../../kube/backoff.js'
import {type EventSink, normalEvent} from '../../kube/events.js'
import {newestFirst, podFullName, stableKey} from '../../kube/helpers.js'
import {containerName} from '../../kube/labels.js'
import type {PodModel} from '../../manifest/model.js'
import {createSandboxForPod, type CreateSandboxHooks, type CreateSandboxSettings} from './create-sandbox.js'
import {readSandboxAttempt, recordDesiredPod} from '../config/desired-state.js'
import {killPod} from './kill.js'
import {rollBackPod} from './rollback.js'
import {podSandboxes, type SandboxContext} from './sandbox.js'

/**
 * The pod that takes the place of `existing` and its sandbox attempt, the newest + 1 (the
 * manifest's own attempt when there is none): a manifest that names no uid keeps the existing
 * pod's identity, so its uid, pod directory and log directory carry over.
 */
export function successorOf(desired: PodModel, existing: readonly PodSandbox[]): {pod: PodModel; attempt: number} {
  const latest = [...existing].sort(newestFirst)[0]
  const pod = desired.uidGenerated && latest?.metadata?.uid ? {...desired, uid: latest.metadata.uid} : desired
  return {pod, attempt: Math.max(desired.attempt ?? 0, ...existing.map((sandbox) => (sandbox.metadata?.attempt ?? 0) + 1))}
}

/** The sandboxes of the pod being recreated (same uid), kept stopped until the new one runs; undefined when there is none. */
function sandboxesToReplace(existing: readonly PodSandbox[], uid: string): PodSandbox[] | undefined {
  const same = existing.filter((sandbox) => sandbox.metadata?.uid === uid)
  return same.length > 0 ? same : undefined
}

/** Kills the existing sandboxes for a recreation of pod `uid`: its own are only stopped, another pod's are removed with its directory. */
async function killForRecreation(
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
async function removeReplacedSandboxes(client: CriClient, replaced: readonly PodSandbox[], podDirRoot: string): Promise<void> {
  if (replaced.length === 0) return
  await killPod(client, [...replaced], {keepPodDirectory: true, podDirRoot}).catch(() => {})
}

/** A recreation under way in a SyncPod pass: what it made, for its completion or its rollback. */
export interface Recreation {
  /** The pod as recreated: a manifest without a uid takes the existing pod's. */
  pod: PodModel
  attempt: number
  /** The pod's own older sandboxes, stopped, removed once the new one runs. */
  replaced?: PodSandbox[]
  sandboxId?: string
  sandbox?: SandboxContext
}

export interface RecreateOptions extends CreateSandboxHooks {
  backOff: BackOff
  podDirRoot: string
}

/**
 * Kills the pod (a stopped sandbox of its own stays until the new one runs) and creates its new
 * sandbox with attempt + 1; SyncPod then starts its containers in it. A container the recreation
 * stopped (running, or done) starts at once in the new sandbox; one that was crash-looping keeps
 * its back-off. Returns the pod's sandboxes to observe next.
 */
export async function recreatePodSandbox(
  client: CriClient,
  desired: PodModel,
  existing: readonly PodSandbox[],
  settings: CreateSandboxSettings,
  options: RecreateOptions,
): Promise<{recreation: Recreation; sandboxes: PodSandbox[]}> {
  const {pod, attempt} = successorOf(desired, existing)
  const recreation: Recreation = {pod, attempt, replaced: sandboxesToReplace(existing, pod.uid)}
  if (existing.length > 0) {
    options.events(
      normalEvent('SandboxChanged', 'Pod sandbox changed, it will be killed and re-created.', podFullName(pod.name, pod.namespace)),
    )
    options.step?.('killing the existing pod')
    await forgetBackOffOfStopped(client, pod, recreation.replaced ?? [], options.backOff)
    await killForRecreation(client, existing, pod.uid, {events: options.events, podDirRoot: options.podDirRoot})
  }

  recreation.sandbox = await createSandboxForPod(client, pod, attempt, settings, {
    ...options,
    onCreated(id) {
      recreation.sandboxId = id
      options.onCreated?.(id)
    },
  })
  return {recreation, sandboxes: await podSandboxes(client, pod)}
}

/** The back-off of the containers the recreation is about to stop, unless their last exit was a failure. */
async function forgetBackOffOfStopped(client: CriClient, pod: PodModel, own: readonly PodSandbox[], backOff: BackOff): Promise<void> {
  const ids = new Set(own.map((sandbox) => sandbox.id))
  const {containers} = await client.runtime('listContainers', {filter: {}})
  const newest = new Map<string, (typeof containers)[number]>()
  for (const container of containers.filter((candidate) => ids.has(candidate.podSandboxId)).sort(newestFirst)) {
    if (!newest.has(containerName(container))) newest.set(containerName(container), container)
  }

  for (const spec of [...pod.initContainers, ...pod.containers]) {
    const container = newest.get(spec.name)
    if (!container) continue
    const failed =
      container.state === 'CONTAINER_EXITED' &&
      (await client
        .runtime('containerStatus', {containerId: container.id, verbose: false})
        .then(({status}) => (status?.exitCode ?? 0) !== 0)
        .catch(() => false))
    if (!failed) backOff.reset(stableKey(pod, spec))
  }
}

/** The new pod runs: the sandboxes it replaced go, and the pod is recorded with its uid. */
export async function finishRecreation(client: CriClient, recreation: Recreation, podDirRoot: string): Promise<void> {
  if (recreation.replaced) await removeReplacedSandboxes(client, recreation.replaced, podDirRoot)
  await recordDesiredPod(podDirRoot, recreation.pod, client.runtimeEndpoint)
}

/**
 * A recreation failed: what it made goes; a pod that lived before keeps its stopped sandbox and its
 * volumes' data (the next sync recreates it again), a new one goes entirely.
 */
export async function rollBackRecreation(
  client: CriClient,
  recreation: Recreation,
  error: unknown,
  options: {events: EventSink; podDirRoot: string},
): Promise<PodctlError> {
  const {pod, replaced} = recreation
  const {failure} = await rollBackPod(client, pod, asPodctlError(error), {
    ...options,
    fromAttempt: replaced ? recreation.attempt : undefined,
    sandboxId: recreation.sandboxId,
    keptAttempts: replaced?.map((sandbox) => sandbox.metadata?.attempt ?? 0),
  })
  return failure
}

/**
 * A pod podctl made a sandbox for that the runtime no longer has (a reboot wiped its state, or
 * `crictl rmp` removed it): it comes back in a new sandbox with the newest attempt + 1, in the same
 * pod directory (its disk emptyDirs and claims keep their data), its containers' restart counts
 * continuing from their log files as the kubelet's calcRestartCountByLogDir does.
 */
export async function lostPodSuccessor(
  pod: PodModel,
  sandboxes: readonly PodSandbox[],
  settings: {podDirRoot: string},
  deps: {sandbox?: unknown; events: EventSink},
): Promise<PodModel> {
  if (sandboxes.length > 0 || deps.sandbox) return pod
  const last = await readSandboxAttempt(settings.podDirRoot, pod.uid)
  if (last === undefined) return pod
  const attempt = Math.max(pod.attempt ?? 0, last + 1)
  const message = `The runtime no longer has the pod's sandbox; creating it again (attempt ${attempt}) with the pod's volumes`
  deps.events(normalEvent('SandboxMissing', message, podFullName(pod.name, pod.namespace)))
  return {...pod, attempt}
}
