/**
 * A session: something podctl makes for as long as one podctl process runs (a debug container or
 * debug pod of issue 35, the library's short-lived pods of issue 36) carries its owner on it, so that
 * whatever the process leaves behind when it dies without cleaning up (SIGKILL, a lost SSH session,
 * a reboot) can be told from what a live session still uses, and removed by the next podctl that
 * sees it.
 *
 * The owner is a process: its pid, its start time (a pid alone may have been given to another
 * process since), the boot it ran in and its pid namespace (a pid means nothing in another one),
 * written as labels on the CRI object; an optional description for people goes in an annotation.
 * A session is
 * - `alive` while that very process runs,
 * - `gone` once it does not (its pid answers no more, answers with another start time, or the
 *   node has booted since),
 * - `unknown` when this podctl cannot judge it (another pid namespace, labels it cannot read):
 *   such objects are left alone.
 *
 * The labels say only whose session an object is; whether podctl made the object at all is
 * kube/ownership.ts's proof, asked first by whoever removes it.
 */
import {bootId, isAlive, pidNamespaceOf, type ProcessIdentity, startTicksOf} from '../util/process-start.js'

export const SessionLabel = {
  /** The owning podctl's pid. */
  pid: 'io.podctl.session.pid',
  /** Its start time, /proc/<pid>/stat's starttime in clock ticks since boot. */
  startTicks: 'io.podctl.session.start',
  /** The boot it ran in (/proc/sys/kernel/random/boot_id). */
  bootId: 'io.podctl.session.boot',
  /** Its pid namespace (`pid:[inode]`): the pid is judged only from the same one. */
  pidNamespace: 'io.podctl.session.pidns',
} as const

export const SessionAnnotation = {
  /** What the session is, for people: `podctl debug web --target main`. */
  description: 'io.podctl.session.description',
} as const

export interface Session extends ProcessIdentity {
  bootId?: string
  pidNamespace?: string
  description?: string
}

export type SessionState = 'alive' | 'gone' | 'unknown'

/** Where this process stands, to judge sessions from (read once per round by a caller judging many). */
export interface Vantage {
  bootId?: string
  pidNamespace?: string
}

type Labeled = {labels: Readonly<Record<string, string>>; annotations?: Readonly<Record<string, string>>}

export function currentVantage(): Vantage {
  return {bootId: bootId(), pidNamespace: pidNamespaceOf('self')}
}

/** This process as the owner of what it is about to make. */
export function currentSession(description?: string): Session {
  return {
    pid: process.pid,
    startTicks: startTicksOf(process.pid),
    ...currentVantage(),
    ...(description === undefined ? {} : {description}),
  }
}

/** The labels that name the session's owner on a container or sandbox. */
export function sessionLabels(session: Session): Record<string, string> {
  const labels: Record<string, string> = {[SessionLabel.pid]: String(session.pid)}
  if (session.startTicks !== undefined) labels[SessionLabel.startTicks] = String(session.startTicks)
  if (session.bootId !== undefined) labels[SessionLabel.bootId] = session.bootId
  if (session.pidNamespace !== undefined) labels[SessionLabel.pidNamespace] = session.pidNamespace
  return labels
}

export function sessionAnnotations(session: Session): Record<string, string> {
  return session.description === undefined ? {} : {[SessionAnnotation.description]: session.description}
}

const DIGITS = /^\d+$/

/** The session an object belongs to; undefined when it carries none (it is no session's). */
export function sessionOf(object: Labeled): Session | undefined {
  const {labels} = object
  const pid = labels[SessionLabel.pid]
  if (pid === undefined) return undefined
  const ticks = labels[SessionLabel.startTicks]
  const description = object.annotations?.[SessionAnnotation.description]
  return {
    pid: DIGITS.test(pid) ? Number(pid) : Number.NaN,
    startTicks: ticks !== undefined && DIGITS.test(ticks) ? Number(ticks) : ticks === undefined ? undefined : Number.NaN,
    bootId: labels[SessionLabel.bootId],
    pidNamespace: labels[SessionLabel.pidNamespace],
    ...(description === undefined ? {} : {description}),
  }
}

/** Whether the session's process still runs, as far as a process standing at `vantage` can tell. */
export function sessionState(session: Session, vantage: Vantage = currentVantage()): SessionState {
  const readable = Number.isSafeInteger(session.pid) && session.pid > 0 && !Number.isNaN(session.startTicks)
  if (!readable) return 'unknown'
  // A process of an earlier boot is gone whatever its namespace was.
  if (session.bootId !== undefined && vantage.bootId !== undefined && session.bootId !== vantage.bootId) return 'gone'
  if (session.pidNamespace !== undefined && session.pidNamespace !== vantage.pidNamespace) return 'unknown'
  return isAlive(session) ? 'alive' : 'gone'
}

/** An object whose session is gone: what a reaper may remove. Objects of no session, or of one it cannot judge, are not. */
export function isOrphaned(object: Labeled, vantage: Vantage = currentVantage()): boolean {
  const session = sessionOf(object)
  return session !== undefined && sessionState(session, vantage) === 'gone'
}

/** The owner in words: `pid 1234 (podctl debug web)`. */
export function describeSession(session: Session): string {
  return `pid ${session.pid}${session.description ? ` (${session.description})` : ''}`
}
