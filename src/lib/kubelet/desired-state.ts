/**
 * What podctl keeps in the pod's directory so later commands (sync, status) know what should run,
 * as the kubelet knows a static pod from its manifest: `pod.json` (the parsed pod, root only),
 * `backoff.json` (the crash back-off ladder, so it survives between `sync` runs) and
 * `status.json` (the status manager's record: readiness, last termination, supervisor).
 */
import {mkdir, readFile, rename, writeFile} from 'node:fs/promises'

import type {PodModel} from '../manifest/model.js'
import {DESIRED_POD_FILE, podDirectory} from './pod-dirs.js'
import {readPodObjects, recordPodObjects} from './recorded-objects.js'

const BACKOFF_FILE = 'backoff.json'
const STATUS_FILE = 'status.json'

export function desiredPodPath(root: string, uid: string): string {
  return `${podDirectory(root, uid)}/${DESIRED_POD_FILE}`
}

/** Writes a file atomically (temporary file, then rename) with the given mode. */
async function writeAtomic(path: string, text: string, mode: number, create = false): Promise<void> {
  // Only pod.json makes the directory: the other records never bring back the directory of a pod just killed.
  if (create) await mkdir(path.slice(0, path.lastIndexOf('/')), {recursive: true})
  const temporary = `${path}.${process.pid}.tmp`
  await writeFile(temporary, text, {mode})
  await rename(temporary, path)
}

async function readJson<T>(path: string): Promise<T | undefined> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as T
  } catch {
    return undefined
  }
}

/** Records the pod as parsed (mode 0600: it may hold Secret-fed values, as the kubelet's secret volumes do). */
export async function recordDesiredPod(root: string, pod: PodModel): Promise<void> {
  await writeAtomic(desiredPodPath(root, pod.uid), `${JSON.stringify(pod, null, 2)}\n`, 0o600, true)
  // pod.json names the pod's ConfigMaps and Secrets; their data is kept apart, in memory (recorded-objects.ts).
  await recordPodObjects(root, pod)
}

/** The pod `run` (or `sync -f`) recorded, or undefined when there is none (a pod made by another tool). */
export async function readDesiredPod(root: string, uid: string): Promise<PodModel | undefined> {
  const pod = await readJson<PodModel>(desiredPodPath(root, uid))
  if (!pod || typeof pod.name !== 'string' || !Array.isArray(pod.containers)) return undefined
  // The names pod.json keeps become lookups again when the data was kept; if not, they stay names only.
  if (pod.objects !== undefined) pod.objects = (await readPodObjects(root, uid)) ?? pod.objects
  return pod
}

export type BackOffEntries = Record<string, {backoffMs: number; lastUpdate: number}>

export async function readBackOff(root: string, uid: string): Promise<BackOffEntries> {
  return (await readJson<BackOffEntries>(`${podDirectory(root, uid)}/${BACKOFF_FILE}`)) ?? {}
}

export async function writeBackOff(root: string, uid: string, entries: BackOffEntries): Promise<void> {
  await writeAtomic(`${podDirectory(root, uid)}/${BACKOFF_FILE}`, `${JSON.stringify(entries)}\n`, 0o600)
}

/** The status manager's record of one container (what the runtime alone cannot tell). */
export interface RecordedContainerStatus {
  ready: boolean
  started: boolean
  /** The last termination, as the kubelet's lastState.terminated. */
  lastTermination?: {
    containerId?: string
    exitCode: number
    reason: string
    message: string
    startedAt: string | null
    finishedAt: string | null
  }
  /** While it waits out its crash back-off: the kubelet's state.waiting (CrashLoopBackOff), and when the back-off ends. */
  waiting?: {reason: string; message: string; backOffUntil?: string}
}

export interface RecordedPodStatus {
  /** pid of the supervisor (sync --watch, run --supervise) while one runs. */
  supervisor?: {pid: number; since: string}
  updatedAt: string
  containers: Record<string, RecordedContainerStatus>
}

export async function readRecordedStatus(root: string, uid: string): Promise<RecordedPodStatus | undefined> {
  return readJson<RecordedPodStatus>(`${podDirectory(root, uid)}/${STATUS_FILE}`)
}

export async function writeRecordedStatus(root: string, uid: string, status: RecordedPodStatus): Promise<void> {
  await writeAtomic(`${podDirectory(root, uid)}/${STATUS_FILE}`, `${JSON.stringify(status, null, 2)}\n`, 0o644)
}
