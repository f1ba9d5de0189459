/**
 * A pod's termination record (`terminating.json` in its pod directory), read: whether a kill of the
 * pod was asked for and is not finished. termination.ts writes it; this half is apart from that one
 * (which reads pod.json records) so that `pods` and `status`, which only show the note, evaluate
 * no more than a path and a JSON read.
 */
import {readFileSync} from 'node:fs'

import {podDirectory} from '../core/pod-directory.js'

const TERMINATION_FILE = 'terminating.json'

export interface TerminationIntent {
  /** RFC 3339: when the kill was asked for. */
  requestedAt: string
  /** Who asked: `podctl kill`, "its manifest was removed", "podctl run --rm", ... */
  requestedBy: string
  /** The grace period asked for (--grace-period); absent: each container's own. */
  gracePeriodSeconds?: number
  /** --force: no preStop, no grace period. */
  force?: boolean
}

export function terminationPath(root: string, uid: string): string {
  return `${podDirectory(root, uid)}/${TERMINATION_FILE}`
}

/** ", Terminating: podctl kill asked at 2026-…" after a pod's phase while its kill is under way (kubectl's STATUS), else ''. */
export function terminationNote(intent: TerminationIntent | undefined): string {
  return intent ? `, Terminating: ${intent.requestedBy} asked at ${intent.requestedAt || 'an unknown time'}` : ''
}

/**
 * The recorded termination of pod `uid`, or undefined. Read synchronously: a supervisor asks it of
 * every pod it syncs, and the answer is almost always a missing file.
 */
export function readTermination(root: string, uid: string): TerminationIntent | undefined {
  let text: string
  try {
    text = readFileSync(terminationPath(root, uid), 'utf8')
  } catch {
    return undefined
  }

  try {
    const json = JSON.parse(text) as Partial<TerminationIntent>
    return {
      requestedAt: typeof json.requestedAt === 'string' ? json.requestedAt : '',
      requestedBy: typeof json.requestedBy === 'string' ? json.requestedBy : 'podctl',
      ...(typeof json.gracePeriodSeconds === 'number' ? {gracePeriodSeconds: json.gracePeriodSeconds} : {}),
      ...(json.force === true ? {force: true} : {}),
    }
  } catch {
    // Half a record is still a request to kill: never a reason to keep the pod.
    return {requestedAt: '', requestedBy: 'podctl'}
  }
}
