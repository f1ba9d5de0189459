/**
 * `podctl sync` for several pods: each pod's lock (so a `run` of the same pod is never raced),
 * its recorded desired state (desired-state.ts), then one SyncPod pass (reconciler.ts), at most
 * `parallel` pods at once; one pod's failure never stops the others. Pods gone from the runtime
 * lose their pod and log directories, as the kubelet cleans up after a deleted pod.
 */
import {readdir, rm} from 'node:fs/promises'

import type {CriClient} from '../cri/client.js'
import {asPodctlError} from '../errors.js'
import type {Container, PodSandbox} from '../../generated/runtime/v1/api.js'
import {normalEvent} from '../kube/events.js'
import {newestFirst} from '../kube/helpers.js'
import {settleLimit} from '../util/concurrency.js'
import {readDesiredPod} from './desired-state.js'
import {removePodDirectory} from './pod-dirs.js'
import {lockPods} from './pod-lock.js'
import {type PodSyncResult, type SyncDeps, syncPodOnce, type SyncSettings} from './reconciler.js'
import {podLogDirectory} from './sandbox.js'

export interface SyncTarget {
  /** name_namespace */
  fullName: string
  /** Every attempt, newest first. */
  sandboxes: PodSandbox[]
}

export interface SyncPodsDeps extends Omit<SyncDeps, 'containers'> {
  parallel: number
  containers?: readonly Container[]
}

function splitFullName(fullName: string): {name: string; namespace: string} {
  const at = fullName.lastIndexOf('_')
  return {name: fullName.slice(0, at), namespace: fullName.slice(at + 1)}
}

/** One pass for each target; a pod podctl did not record (made by crictl or the kubelet) is left alone and says so. */
export async function syncPods(targets: readonly SyncTarget[], settings: SyncSettings, deps: SyncPodsDeps): Promise<PodSyncResult[]> {
  const locks = await lockPods(
    settings.podDirRoot,
    targets.map((target) => target.fullName),
    {
      deadline: settings.deadline,
      signal: deps.signal,
      onWait: (name, pid) =>
        deps.events(normalEvent('Waiting', `Another podctl (pid ${pid}) is running pod ${name}; waiting for it`, name)),
    },
  )
  try {
    const settled = await settleLimit(targets, deps.parallel, (target) => syncTarget(target, settings, deps))
    return settled.map((outcome, index) => {
      if (outcome.status === 'fulfilled') return outcome.value
      const {name, namespace} = splitFullName(targets[index].fullName)
      return {pod: name, namespace, uid: targets[index].sandboxes[0]?.metadata?.uid ?? '', did: [], failure: asPodctlError(outcome.reason)}
    })
  } finally {
    await locks.release()
  }
}

async function syncTarget(target: SyncTarget, settings: SyncSettings, deps: SyncPodsDeps): Promise<PodSyncResult> {
  const sandboxes = [...target.sandboxes].sort(newestFirst)
  const uid = sandboxes[0]?.metadata?.uid ?? ''
  const pod = uid ? await readDesiredPod(settings.podDirRoot, uid) : undefined
  if (!pod) {
    const {name, namespace} = splitFullName(target.fullName)
    return {pod: name, namespace, uid, did: ['left alone: podctl run did not record this pod (made by another tool?)']}
  }

  return syncPodOnce(pod, sandboxes, settings, deps)
}

export interface GonePod {
  /** name_namespace */
  fullName: string
  uid: string
}

/**
 * Pods podctl recorded that the runtime no longer has: their pod directory and log directory are
 * removed. Only directories holding a recorded pod.json are considered (a `run` in progress has none yet).
 */
export async function removeGonePods(
  client: CriClient,
  settings: Pick<SyncSettings, 'podDirRoot' | 'logsRoot'>,
  matches: (pod: {name: string; namespace: string}) => boolean,
): Promise<GonePod[]> {
  const entries = await readdir(settings.podDirRoot, {withFileTypes: true}).catch(() => [])
  const {items} = await client.runtime('listPodSandbox', {})
  const live = new Set(items.map((sandbox) => sandbox.metadata?.uid))
  const gone: GonePod[] = []
  for (const entry of entries) {
    if (!entry.isDirectory() || live.has(entry.name)) continue
    const pod = await readDesiredPod(settings.podDirRoot, entry.name)
    if (!pod || pod.uid !== entry.name || !matches(pod)) continue
    await removePodDirectory(settings.podDirRoot, pod.uid)
    await rm(podLogDirectory(pod, settings.logsRoot), {recursive: true, force: true})
    gone.push({fullName: `${pod.name}_${pod.namespace}`, uid: pod.uid})
  }

  return gone
}
