/**
 * What podctl writes on a debug container or debug pod (issue 35) besides what proves it podctl's
 * (kube/ownership.ts): which kind of debug object it is, and the session of the `podctl debug` that
 * made it (kube/session.ts), so that whatever a killed session leaves behind can be told from what a
 * live one still uses and removed by the next podctl debug or `podctl gc` (reap.ts).
 */
import {randomBytes} from 'node:crypto'

import {currentSession, sessionAnnotations, sessionLabels} from '../kube/session.js'

/** On a debug container or the sandbox of a debug pod: `container` or `node`. */
export const DEBUG_LABEL = 'io.podctl.debug'

export type DebugKind = 'container' | 'node'

export interface DebugMarks {
  labels: Record<string, string>
  annotations: Record<string, string>
}

/**
 * The labels and annotations of a debug object this process makes; `description` is for people
 * (`podctl debug web --target main`). Without `session` (--keep) it is no session's: no reaper takes it.
 */
export function debugMarks(kind: DebugKind, description: string, options?: {session: boolean}): DebugMarks {
  if (options?.session === false) return {labels: {[DEBUG_LABEL]: kind}, annotations: {}}
  const session = currentSession(description)
  return {labels: {...sessionLabels(session), [DEBUG_LABEL]: kind}, annotations: sessionAnnotations(session)}
}

/** Whether an object carries the debug mark of this kind. */
export function isDebugObject(object: {labels: Readonly<Record<string, string>>}, kind: DebugKind): boolean {
  return object.labels[DEBUG_LABEL] === kind
}

/** The random end of a debug object's name: five of kubectl's letters and digits (no vowels, no look-alikes). */
export function debugNameSuffix(): string {
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789'
  return Array.from(randomBytes(5), (byte) => alphabet[byte % alphabet.length]).join('')
}
