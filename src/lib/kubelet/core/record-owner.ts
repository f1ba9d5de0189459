/**
 * Whose record a pod directory holds. Every runtime shares the pod directory root
 * (`--pod-dir-root`, default /var/lib/podctl/pods), so `run` and `sync` write into pod.json the
 * runtime endpoint the pod lives on (`runtimeEndpoint`, normalised to unix:///path), and no command
 * acts on a record of another runtime: `sync` (one pod, --all, --watch) leaves it alone, the
 * gone-pods sweep never deletes it, `kill` keeps it and the pod's directory.
 *
 * A record written before records named their runtime (legacy) cannot say whose it is. It is taken
 * as this runtime's only where this runtime has the pod's sandbox (the caller knows: a `sync` or a
 * `kill` of a sandbox it listed), and `sync` then writes this runtime into it; a gone-pods sweep
 * never deletes it, since the runtime that has the pod may be another one.
 */
import {realpathSync} from 'node:fs'
import {readFile} from 'node:fs/promises'
import {join} from 'node:path'

import {normalizeEndpoint, socketPath} from '../../cri/endpoint.js'
import type {RecordOwner} from '../../kube/ownership.js'

export type {RecordOwner} from '../../kube/ownership.js'

/** The file in a pod directory that says what should run (desired-state.ts reads and writes it). */
export const DESIRED_POD_FILE = 'pod.json'

/**
 * An endpoint as records keep and compare it: unix:///path for unix:///path, unix:/path and /path
 * alike, with the socket's path resolved while it exists (/var/run is a symlink to /run on most
 * hosts, and crictl's default names the former).
 */
export function recordEndpoint(endpoint: string): string {
  const trimmed = endpoint.trim()
  let normalized: string
  try {
    normalized = normalizeEndpoint(trimmed)
  } catch {
    return trimmed
  }

  try {
    return `unix://${realpathSync(socketPath(normalized))}`
  } catch {
    return normalized
  }
}

/** Whose a record is that names `recorded` (undefined: legacy), seen from the runtime `runtime` (undefined: unknown, so 'this'). */
export function recordOwner(recorded: unknown, runtime: string | undefined): RecordOwner {
  if (typeof recorded !== 'string' || recorded.trim() === '') return runtime === undefined ? 'this' : 'legacy'
  if (runtime === undefined) return 'this'
  return recordEndpoint(recorded) === recordEndpoint(runtime) ? 'this' : 'other'
}

/** The runtime endpoint the pod.json in `directory` names; undefined when it names none or there is no readable pod.json. */
export async function recordedRuntimeIn(directory: string): Promise<string | undefined> {
  try {
    const value = (JSON.parse(await readFile(join(directory, DESIRED_POD_FILE), 'utf8')) as {runtimeEndpoint?: unknown}).runtimeEndpoint
    return typeof value === 'string' && value.trim() !== '' ? value : undefined
  } catch {
    return undefined
  }
}

/** True when the pod.json in `directory` names a runtime other than `runtime` (kill keeps such a record and directory). */
export async function recordOfAnotherRuntime(directory: string, runtime: string | undefined): Promise<boolean> {
  return recordOwner(await recordedRuntimeIn(directory), runtime) === 'other'
}
