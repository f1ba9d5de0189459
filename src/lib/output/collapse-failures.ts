/**
 * Failures of a command over many pods, reported once per kind: a runtime that died fails every pod
 * the same way, and thirty copies of one line hide the point.
 */
import {PodctlError} from '../errors.js'

/** One pod's failure as a command over many pods reports it (and prints it with -o json). */
export interface PodFailure {
  /** The pod's full name, or the reference that matched no pod. */
  pod: string
  code: string
  exitCode: number
  message: string
}

export function podFailure(pod: string, error: PodctlError): PodFailure {
  return {pod, code: error.code, exitCode: error.exitCode, message: error.message}
}

/** Identical failures (same code and message) as one error naming how many pods, and the first three. */
export function collapseIdentical(failures: readonly PodFailure[]): PodctlError[] {
  const groups = new Map<string, PodFailure[]>()
  for (const failure of failures) {
    const key = `${failure.code}\u0000${failure.message}`
    groups.set(key, [...(groups.get(key) ?? []), failure])
  }

  return [...groups.values()].map((group) => {
    const [{code, exitCode, message}] = group
    const pods = group.map((failure) => failure.pod)
    const shown = pods.length > 3 ? `${pods.slice(0, 3).join(', ')}, ...` : pods.join(', ')
    return new PodctlError(code, exitCode, group.length > 1 ? `${message} (${group.length} pods: ${shown})` : message)
  })
}
