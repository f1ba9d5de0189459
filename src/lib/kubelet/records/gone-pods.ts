/**
 * Pods recorded for this runtime (pod.json naming its endpoint: record-owner.ts) that the runtime
 * no longer has, e.g. because a reboot wiped the runtime's state or crictl removed their sandboxes
 * behind podctl's back. `sync` brings them back (workers/lost-pods.ts) and `kill` removes those it
 * names (kill-records.ts). Both go through here, so they agree on which records count.
 */
import {readdir, readlink, rm} from 'node:fs/promises'
import {join} from 'node:path'

import type {PodSandbox} from '../../../generated/runtime/v1/api.js'
import type {PodModel} from '../../manifest/model.js'
import {readPodRecord} from '../config/desired-state.js'
import {podLogDirectoryOwnership} from '../core/owned-logs.js'
import {recordedRuntimeIn, recordOwner} from '../core/record-owner.js'
import {DESIRED_POD_FILE, removePodDirectory} from '../volumes/pod-dirs.js'
import {podDirectory} from '../core/pod-directory.js'
import {containerLogsDir} from '../kuberuntime/container-logs-links.js'
import {podLogDirectory} from '../kuberuntime/sandbox.js'

/**
 * The pods recorded under `podDirRoot` for `runtime`. A record of another runtime, or one that
 * names none (legacy), may be a pod that runs elsewhere: it is never listed. So is a directory
 * whose pod.json names another uid, and one without a pod.json (a `run` in progress has none yet).
 */
export async function recordsOfRuntime(podDirRoot: string, runtime: string | undefined): Promise<PodModel[]> {
  const entries = await readdir(podDirRoot, {withFileTypes: true}).catch(() => [])
  const records: PodModel[] = []
  for (const entry of entries) {
    if (!entry.isDirectory()) continue
    const record = await readPodRecord(podDirRoot, entry.name)
    if (!record || recordOwner(record.runtimeEndpoint, runtime) !== 'this' || record.pod.uid !== entry.name) continue
    records.push(record.pod)
  }

  return records
}

/**
 * recordsOfRuntime for the pods the runtime lacks: only the directories whose uid `live` (the
 * uids of a listing) does not hold are read, so a supervisor can ask on every listing for the cost
 * of one readdir while the runtime has every pod.
 */
export async function recordsMissingFrom(podDirRoot: string, runtime: string | undefined, live: ReadonlySet<string>): Promise<PodModel[]> {
  const entries = await readdir(podDirRoot, {withFileTypes: true}).catch(() => [])
  const records: PodModel[] = []
  for (const entry of entries) {
    if (!entry.isDirectory() || live.has(entry.name)) continue
    const record = await readPodRecord(podDirRoot, entry.name)
    if (!record || recordOwner(record.runtimeEndpoint, runtime) !== 'this' || record.pod.uid !== entry.name) continue
    records.push(record.pod)
  }

  return records
}

/** The records of which the runtime has no sandbox (by uid: every attempt of a pod shares its uid). */
export function goneFromRuntime(records: readonly PodModel[], sandboxes: readonly PodSandbox[]): PodModel[] {
  const live = new Set(sandboxes.map((sandbox) => sandbox.metadata?.uid))
  return records.filter((pod) => !live.has(pod.uid))
}

/**
 * Removes a gone pod's record (one of this runtime's: recordsOfRuntime): pod.json first, so a
 * supervisor following it lets the pod go (supervised-record.ts) before anything else disappears,
 * as `kill` forgets a live pod before it stops it; then the pod directory (volumes, back-off,
 * status, supervisor.lock), the log directory the record names under `logsRoot` and the container
 * log links into it. A log directory podctl marked for another runtime (owned-logs.ts) stays: the
 * same uid there is another runtime's pod.
 */
export async function removePodRecord(
  pod: PodModel,
  {podDirRoot, logsRoot, linksDir = containerLogsDir()}: {podDirRoot: string; logsRoot: string; linksDir?: string},
): Promise<void> {
  const runtime = await recordedRuntimeIn(podDirectory(podDirRoot, pod.uid))
  await rm(`${podDirectory(podDirRoot, pod.uid)}/${DESIRED_POD_FILE}`, {force: true})
  await removePodDirectory(podDirRoot, pod.uid)
  const logs = podLogDirectory(pod, logsRoot)
  if ((await podLogDirectoryOwnership(logs, pod.uid, runtime)).rule === 'other-runtime') return
  await rm(logs, {recursive: true, force: true})
  await removeLinksInto(linksDir, `${pod.name}_${pod.namespace}_`, logs)
}

/**
 * The containers are gone without podctl seeing their IDs, so their log links (container-logs-links.ts)
 * are found by the pod's name prefix and removed when they point into its log directory, as the
 * kubelet's container GC removes links left dangling. Best effort, as the links themselves are.
 */
async function removeLinksInto(dir: string, prefix: string, logs: string): Promise<void> {
  const names = await readdir(dir).catch(() => [])
  for (const name of names) {
    if (!name.startsWith(prefix) || !name.endsWith('.log')) continue
    const target = await readlink(join(dir, name)).catch(() => undefined)
    if (target?.startsWith(`${logs}/`)) await rm(join(dir, name), {force: true}).catch(() => {})
  }
}
