/**
 * `podctl sync` for several pods: each pod's lock (so a `run` of the same pod is never raced),
 * its recorded desired state (desired-state.ts), then one SyncPod pass (kuberuntime/sync-pod.ts), at most
 * `parallel` pods at once; one pod's failure never stops the others. Pods of this runtime it lost
 * come back (lost-pods.ts); records of other runtimes (record-owner.ts) are left alone.
 */
import {asPodctlError} from '../../errors.js'
import type {Container, PodSandbox} from '../../../generated/runtime/v1/api.js'
import {normalEvent} from '../../kube/events.js'
import {newestFirst} from '../../kube/helpers.js'
import {settleLimit} from '../../util/concurrency.js'
import {claimLegacyRecord, readPodRecord, RecordedEndpoints} from '../config/desired-state.js'
import {lockPods} from '../config/pod-lock.js'
import {recordOwner, type RecordOwner} from '../core/record-owner.js'
import type {PodSyncResult, SyncDeps, SyncSettings} from '../kuberuntime/sync-pod.js'
import {podWorkers} from './pod-workers.js'
import {podSandboxes} from '../kuberuntime/sandbox.js'
import {supervisorOf} from '../config/supervisor-lock.js'

export interface SyncTarget {
  /** name_namespace */
  fullName: string
  /** Every attempt, newest first; none for a pod the runtime lost (lost-pods.ts). */
  sandboxes: PodSandbox[]
  /** A pod the runtime lost: the uid of its record. */
  lostUid?: string
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
  let sandboxes = [...target.sandboxes].sort(newestFirst)
  const uid = sandboxes[0]?.metadata?.uid ?? target.lostUid ?? ''
  const runtime = deps.client.runtimeEndpoint
  const record = uid ? await readPodRecord(settings.podDirRoot, uid) : undefined
  // Lost when listed, looked at again under its lock: a `run` starting it then has made its sandbox by now.
  if (target.lostUid && record) sandboxes = (await podSandboxes(deps.client, record.pod)).sort(newestFirst)
  const owner = record && recordOwner(record.runtimeEndpoint, runtime)
  if (!record || owner === 'other') {
    const {name, namespace} = splitFullName(target.fullName)
    const why = record
      ? `left alone: its record in the pod directory is the pod of runtime ${record.runtimeEndpoint}`
      : 'left alone: podctl run did not record this pod (made by another tool?)'
    return {pod: name, namespace, uid, did: [why]}
  }

  // A record from before records named their runtime: this runtime has its sandbox, so it is this runtime's
  // (and a later sweep may remove it). Not while a supervisor follows it: a rewritten pod.json is an apply to it.
  if (owner === 'legacy' && runtime && !(await supervisorOf(settings.podDirRoot, uid).catch(() => undefined)))
    await claimLegacyRecord(settings.podDirRoot, uid, runtime).catch(() => {})
  return podWorkers.sync(record.pod, sandboxes, settings, deps)
}

/**
 * `select` for the supervisor (sync --watch) without the pods whose record is another runtime's
 * (record-owner.ts): those are never synced or probed here. Each is told once, as the supervisor
 * tells a pod podctl did not record.
 */
export function ownSelection(
  select: () => Promise<SyncTarget[]>,
  {podDirRoot, runtime, events}: {podDirRoot: string; runtime: string | undefined; events: SyncDeps['events']},
): () => Promise<SyncTarget[]> {
  const told = new Set<string>()
  const endpoints = new RecordedEndpoints(podDirRoot)
  return async () => {
    const targets = await select()
    const records = await Promise.all(
      targets.map(async (target) => {
        const uid = [...target.sandboxes].sort(newestFirst)[0]?.metadata?.uid
        return uid ? endpoints.read(uid) : undefined
      }),
    )
    // Each endpoint resolved once a turn (recordOwner resolves the socket's path: a few lstat calls).
    const owners = new Map<string | undefined, RecordOwner>()
    const ownerOf = (recorded: string | undefined) =>
      owners.get(recorded) ?? owners.set(recorded, recordOwner(recorded, runtime)).get(recorded)!
    return targets.filter((target, index) => {
      const record = records[index]
      if (!record || ownerOf(record.runtimeEndpoint) !== 'other') return true
      if (!told.has(target.fullName)) {
        told.add(target.fullName)
        events(normalEvent('NotManaged', `Its record is the pod of runtime ${record.runtimeEndpoint}; left alone`, target.fullName))
      }

      return false
    })
  }
}
