/**
 * A pod's termination, recorded in its pod directory (`terminating.json`) before the kill begins and
 * removed with the directory when the pod is gone. The kubelet's pod workers never lose a kill once
 * it is asked for: a pod that is terminating stays so until it is terminated, and nothing starts it
 * again meanwhile. A kill the runtime could not carry out (frozen, restarting, unreachable) or whose
 * podctl was interrupted or killed stays recorded, and whoever looks at the pod next — a supervisor
 * on its next turn, `podctl sync`, another `kill` — finishes it instead of syncing the pod.
 *
 * Only a pod podctl recorded for this runtime (its pod.json: record-owner.ts) gets the record: a pod
 * another tool made has no directory of podctl's to keep it in, and is killed once, as asked.
 */
import {existsSync, readdirSync, renameSync, writeFileSync} from 'node:fs'

import {recordOwner} from '../core/record-owner.js'
import type {PodModel} from '../../manifest/model.js'
import {readPodRecord} from './desired-state.js'
import {readTermination, type TerminationIntent, terminationPath} from './termination-record.js'

/**
 * Records that pod `uid` is to be terminated, when its pod.json is this runtime's (or names no
 * runtime); returns whether it did. An intent already recorded is kept: the first request decides
 * (the kubelet keeps the first kill's grace period unless a later one is shorter).
 */
export async function recordTermination(
  root: string,
  uid: string,
  runtime: string | undefined,
  intent: TerminationIntent,
): Promise<boolean> {
  const record = await readPodRecord(root, uid)
  if (!record || recordOwner(record.runtimeEndpoint, runtime) === 'other') return false
  const earlier = readTermination(root, uid)
  const path = terminationPath(root, uid)
  const kept = earlier ? shorterOf(earlier, intent) : intent
  if (earlier && JSON.stringify(kept) === JSON.stringify(earlier)) return true
  const temporary = `${path}.${process.pid}.tmp`
  writeFileSync(temporary, `${JSON.stringify(kept)}\n`, {mode: 0o600})
  renameSync(temporary, path)
  return true
}

/** The earlier intent, with a later request's grace period when that one is shorter (or forced). */
function shorterOf(earlier: TerminationIntent, later: TerminationIntent): TerminationIntent {
  if (later.force && !earlier.force) return {...earlier, force: true}
  const grace = later.gracePeriodSeconds
  if (grace === undefined || (earlier.gracePeriodSeconds !== undefined && earlier.gracePeriodSeconds <= grace)) return earlier
  return {...earlier, gracePeriodSeconds: grace}
}

/**
 * The pods of this runtime whose termination is recorded: a supervisor keeps them selected (their
 * manifest or selection may no longer name them) until their workers have finished them. One readdir
 * and a stat per pod directory; only the few that are terminating are read.
 */
export async function terminatingPods(root: string, runtime: string | undefined): Promise<PodModel[]> {
  let uids: string[]
  try {
    uids = readdirSync(root)
  } catch {
    return []
  }

  const pods: PodModel[] = []
  for (const uid of uids) {
    if (uid.startsWith('.') || !existsSync(terminationPath(root, uid))) continue
    const record = await readPodRecord(root, uid)
    if (record && record.pod.uid === uid && recordOwner(record.runtimeEndpoint, runtime) !== 'other') pods.push(record.pod)
  }

  return pods
}
