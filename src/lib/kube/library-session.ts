/**
 * The library's sessions (issue 36): the pods the library starts carry the session of their test
 * process (session.ts) and a mark of their own. Which of them a reaper may take — podctl's (by the
 * ownership proof), the library's, of a session that is gone — is decided here, for every reaper
 * (the library's connect(), `podctl gc`, a supervisor's collector); the kill itself is the pod workers'.
 */
import type {PodSandbox} from '../../generated/runtime/v1/api.js'
import {podFullName} from './helpers.js'
import {sandboxOwnership} from './ownership.js'
import {currentVantage, describeSession, isOrphaned, sessionOf} from './session.js'

/** Marks a pod the library started; its value is the test runner's worker, when one is known (vitest, Jest). */
export const LIBRARY_SESSION_LABEL = 'io.podctl.library.worker'

/** Sandboxes of library pods whose session is gone, that podctl can prove it made, by pod (name_namespace). */
export function goneSessionPods(sandboxes: readonly PodSandbox[]): Map<string, PodSandbox[]> {
  const vantage = currentVantage()
  const pods = new Map<string, PodSandbox[]>()
  for (const sandbox of sandboxes) {
    if (!(LIBRARY_SESSION_LABEL in sandbox.labels) || !sandboxOwnership(sandbox).ours || !isOrphaned(sandbox, vantage)) continue
    const fullName = podFullName(sandbox.metadata?.name ?? '', sandbox.metadata?.namespace ?? '')
    pods.set(fullName, [...(pods.get(fullName) ?? []), sandbox])
  }

  return pods
}

/** Whose the pod's session was, in words: `pid 1234 (podctl library, vitest-7)`. */
export function goneSessionOf(sandboxes: readonly PodSandbox[]): string {
  const session = sandboxes.map((sandbox) => sessionOf(sandbox)).find((found) => found !== undefined)
  return session ? describeSession(session) : 'unknown'
}
