/**
 * What podctl keeps in the pod's directory so later commands (sync, status) know what should run,
 * as the kubelet knows a static pod from its manifest: `pod.json` (the parsed pod, root only, with
 * the runtime endpoint the pod lives on: record-owner.ts), `backoff.json` (the crash back-off
 * ladder, so it survives between `sync` runs), `status.json` (the status manager's record:
 * readiness, last termination, supervisor) and `sandbox.json` (the newest sandbox attempt, so a pod
 * the runtime lost comes back with attempt + 1).
 */
import {mkdirSync, readFileSync, renameSync, writeFileSync} from 'node:fs'

import {AlreadyExistsError} from '../../errors.js'
import {currentSignature} from '../../util/file-signature.js'
import type {PodModel} from '../../manifest/model.js'
import {podDirectory} from '../core/pod-directory.js'
import {DESIRED_POD_FILE, recordEndpoint, recordOwner} from '../core/record-owner.js'
import {readPodObjects, recordPodObjects} from './recorded-objects.js'

const BACKOFF_FILE = 'backoff.json'
const STATUS_FILE = 'status.json'
const SANDBOX_FILE = 'sandbox.json'

export function desiredPodPath(root: string, uid: string): string {
  return `${podDirectory(root, uid)}/${DESIRED_POD_FILE}`
}

/**
 * Writes a file atomically (temporary file, then rename) with the given mode. The records are a few
 * hundred bytes and a supervisor of 100 pods writes some twenty a second: each fs/promises call is
 * thread-pool round trips (writeFile alone four), which cost more CPU than the writes, so they are
 * synchronous, as the supervisor's other looks at these files are.
 */
async function writeAtomic(path: string, text: string, mode: number, create = false): Promise<void> {
  // Only pod.json makes the directory: the other records never bring back the directory of a pod just killed.
  if (create) mkdirSync(path.slice(0, path.lastIndexOf('/')), {recursive: true})
  replaceFile(path, text, mode)
}

function replaceFile(path: string, text: string, mode: number): void {
  const temporary = `${path}.${process.pid}.tmp`
  writeFileSync(temporary, text, {mode})
  renameSync(temporary, path)
}

/** What this process last wrote to a record (what it compares), and the signature of the file that write made. */
const lastWritten = new Map<string, {content: string; signature: string | undefined}>()

/**
 * writeAtomic, unless this process last wrote the same `content` to the path and the file is still
 * the one it made (util/file-signature.ts: nobody replaced or removed it since). A supervisor rewrote
 * each pod's status and back-off records on every turn, mostly unchanged: with 100 pods that was a
 * fifth of its CPU, in open, write, rename and close.
 */
function writeIfChanged(path: string, text: string, mode: number, content = text): void {
  const last = lastWritten.get(path)
  if (last?.content === content && last.signature !== undefined && currentSignature(path) === last.signature) return
  lastWritten.delete(path)
  replaceFile(path, text, mode)
  // Paths of pods long gone would pile up under a supervisor that runs for months: forget them all now and then.
  if (lastWritten.size >= 10_000) lastWritten.clear()
  lastWritten.set(path, {content, signature: currentSignature(path)})
}

/** A record as JSON, read synchronously for the same reason; undefined when it is missing or not JSON. */
async function readJson<T>(path: string): Promise<T | undefined> {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as T
  } catch {
    return undefined
  }
}

/**
 * Records the pod as parsed (mode 0600: it may hold Secret-fed values, as the kubelet's secret
 * volumes do), with the runtime endpoint it lives on; without one the record names no runtime.
 */
export async function recordDesiredPod(root: string, pod: PodModel, runtime?: string): Promise<void> {
  const record = runtime === undefined ? pod : {runtimeEndpoint: recordEndpoint(runtime), ...pod}
  await writeAtomic(desiredPodPath(root, pod.uid), `${JSON.stringify(record, null, 2)}\n`, 0o600, true)
  // pod.json names the pod's ConfigMaps and Secrets; their data is kept apart, in memory (recorded-objects.ts).
  await recordPodObjects(root, pod)
}

/** A pod's record: the pod, and the runtime endpoint it names (undefined for a record from before records named one). */
export interface PodRecord {
  pod: PodModel
  runtimeEndpoint?: string
}

/** The record `run` (or `sync -f`) wrote, whichever runtime it names; undefined when there is none. */
export async function readPodRecord(root: string, uid: string): Promise<PodRecord | undefined> {
  const json = await readJson<PodModel & {runtimeEndpoint?: unknown}>(desiredPodPath(root, uid))
  if (!json || typeof json.name !== 'string' || !Array.isArray(json.containers)) return undefined
  const {runtimeEndpoint, ...pod} = json
  // The names pod.json keeps become lookups again when the data was kept; if not, they stay names only.
  if (pod.objects !== undefined) pod.objects = (await readPodObjects(root, uid)) ?? pod.objects
  return {pod, runtimeEndpoint: typeof runtimeEndpoint === 'string' && runtimeEndpoint.trim() !== '' ? runtimeEndpoint : undefined}
}

/**
 * The runtime endpoint each pod's record names (undefined: none; absent: no record), read again only
 * when pod.json changed (util/file-signature.ts): a supervisor asks it of every pod on every
 * turn, and pod.json is the largest of a pod's records.
 */
export class RecordedEndpoints {
  private readonly known = new Map<string, {signature: string; record?: {runtimeEndpoint?: string}}>()

  constructor(private readonly root: string) {}

  async read(uid: string): Promise<{runtimeEndpoint?: string} | undefined> {
    const signature = currentSignature(desiredPodPath(this.root, uid))
    if (signature === undefined) {
      this.known.delete(uid)
      return undefined
    }

    const seen = this.known.get(uid)
    if (seen?.signature === signature) return seen.record
    const record = await readPodRecord(this.root, uid)
    const named = record && {runtimeEndpoint: record.runtimeEndpoint}
    this.known.set(uid, {signature, record: named})
    return named
  }
}

/**
 * The pod `run` (or `sync -f`) recorded, or undefined when there is none (a pod made by another
 * tool) or when it is the record of a runtime other than `runtime`. A record that names no runtime
 * is returned: callers reach it through a sandbox of their runtime. Without `runtime`, any record.
 */
export async function readDesiredPod(root: string, uid: string, runtime?: string): Promise<PodModel | undefined> {
  const record = await readPodRecord(root, uid)
  if (!record || recordOwner(record.runtimeEndpoint, runtime) === 'other') return undefined
  return record.pod
}

/**
 * Why `uid` cannot be recorded for a pod of `runtime`: its directory holds the record of a pod of
 * another runtime (both were given the same metadata.uid), which this runtime must not overwrite.
 */
export async function recordOfAnotherRuntimeError(
  root: string,
  uid: string,
  runtime: string | undefined,
): Promise<AlreadyExistsError | undefined> {
  const record = await readPodRecord(root, uid)
  if (!record || recordOwner(record.runtimeEndpoint, runtime) !== 'other') return undefined
  const name = `${record.pod.name}_${record.pod.namespace}`
  return new AlreadyExistsError(
    `uid ${uid} is recorded for pod ${name} of runtime ${record.runtimeEndpoint} (pod directory ${podDirectory(root, uid)}); ` +
      'give this pod another metadata.uid, or leave it out',
  )
}

/** Writes `runtime` into a record that names none (this runtime has the pod's sandbox), so a later sweep knows whose it is. */
export async function claimLegacyRecord(root: string, uid: string, runtime: string): Promise<void> {
  const path = desiredPodPath(root, uid)
  const json = await readJson<Record<string, unknown>>(path)
  if (!json || typeof json !== 'object' || recordOwner(json.runtimeEndpoint, runtime) !== 'legacy') return
  await writeAtomic(path, `${JSON.stringify({runtimeEndpoint: recordEndpoint(runtime), ...json}, null, 2)}\n`, 0o600)
}

export type BackOffEntries = Record<string, {backoffMs: number; lastUpdate: number}>

export async function readBackOff(root: string, uid: string): Promise<BackOffEntries> {
  return (await readJson<BackOffEntries>(`${podDirectory(root, uid)}/${BACKOFF_FILE}`)) ?? {}
}

export async function writeBackOff(root: string, uid: string, entries: BackOffEntries): Promise<void> {
  writeIfChanged(`${podDirectory(root, uid)}/${BACKOFF_FILE}`, `${JSON.stringify(entries)}\n`, 0o600)
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
  /** pid of the supervisor (sync --watch, run --supervise) while one runs, and when it first wrote this record. */
  supervisor?: {pid: number; since: string}
  /** When what the record says last changed. */
  updatedAt: string
  containers: Record<string, RecordedContainerStatus>
}

export async function readRecordedStatus(root: string, uid: string): Promise<RecordedPodStatus | undefined> {
  return readJson<RecordedPodStatus>(`${podDirectory(root, uid)}/${STATUS_FILE}`)
}

/** Written when what it says changes: its times alone (updatedAt, supervisor.since) do not make a new record. */
export async function writeRecordedStatus(root: string, uid: string, status: RecordedPodStatus): Promise<void> {
  const content = JSON.stringify([status.supervisor?.pid, status.containers])
  writeIfChanged(`${podDirectory(root, uid)}/${STATUS_FILE}`, `${JSON.stringify(status, null, 2)}\n`, 0o644, content)
}

/** The newest sandbox made for the pod: written once RunPodSandbox answered (the pod directory exists by then). */
export async function recordSandboxAttempt(root: string, uid: string, sandbox: {id: string; attempt: number}): Promise<void> {
  await writeAtomic(`${podDirectory(root, uid)}/${SANDBOX_FILE}`, `${JSON.stringify(sandbox)}\n`, 0o644)
}

/** The attempt of the newest sandbox podctl made for the pod, when it made one. */
export async function readSandboxAttempt(root: string, uid: string): Promise<number | undefined> {
  const recorded = await readJson<{attempt?: unknown}>(`${podDirectory(root, uid)}/${SANDBOX_FILE}`)
  return typeof recorded?.attempt === 'number' ? recorded.attempt : undefined
}
