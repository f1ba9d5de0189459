/**
 * The one lock primitive under a pod's record: both the pass lock (pod-lock.ts: `run`, `sync`,
 * `sync -f` while they act) and the supervisor lock (supervisor-lock.ts: one supervisor per pod)
 * are a lock file of this kind, with one format and one stale rule.
 *
 * Format: JSON `{pid, since, holder, startTicks, token}`, mode 0600. It is written whole to a
 * temporary file and hard-linked into place (link(2) fails with EEXIST like O_EXCL), so a lock
 * never exists half-written. `token` is random per holder: two holders in one process differ, and
 * a release removes only a file that still holds its own token. A bare pid (`1234\n`, the pass
 * lock of podctl before this format) is read as a holder without a token.
 *
 * Stale rule: the lock is stale, and is taken over rather than waited on, when its holder is gone
 * — the pid does not answer, or it answers but /proc says it started at another time than the
 * holder did (the pid was reused after a SIGKILL or a reboot) — or when the file is not a lock and
 * stays so after one short re-read.
 */
import {randomBytes} from 'node:crypto'
import {linkSync, readFileSync, unlinkSync, writeFileSync} from 'node:fs'

import {isAlive, startTicksOf} from '../../util/process-start.js'

/** How long a file that is not (yet) a lock is given before it counts as garbage. */
export const GARBAGE_REREAD_MS = 100

export interface LockHolder {
  pid: number
  /** When it took the lock (RFC 3339). */
  since: string
  /** What holds it, e.g. `podctl sync --watch`. */
  holder: string
  /** The holder's start time in clock ticks since boot (/proc/<pid>/stat field 22), to tell a reused pid. */
  startTicks?: number
  /** Random per holder; empty for a bare-pid lock of an older podctl. */
  token: string
}

export type LockState = LockHolder | 'absent' | 'garbage'

export type LockClaim = {held: true; holder: LockHolder} | {held: false; holder: LockHolder}

/** A new holder identity for this process: one per SupervisorLocks, one per pass-lock acquisition. */
export function newHolder(description: string): LockHolder {
  return {
    pid: process.pid,
    since: new Date().toISOString(),
    holder: description,
    startTicks: startTicksOf(process.pid),
    token: randomBytes(8).toString('hex'),
  }
}

/**
 * Takes the lock at `path` for `me`, or keeps it when `me` holds it already; when another live
 * holder has it, says who. A stale lock is removed (unless it changed meanwhile) and raced for
 * again: link(2) decides who wins. The lock's directory must exist.
 */
export async function takeLock(path: string, me: LockHolder): Promise<LockClaim> {
  for (;;) {
    const current = await readLock(path)
    if (current === 'absent') {
      if (await createLock(path, me)) return {held: true, holder: me}
      continue
    }

    if (current !== 'garbage' && current.token !== '' && current.token === me.token) return {held: true, holder: current}
    if (current !== 'garbage' && isAlive(current)) return {held: false, holder: current}
    await removeStale(path, current)
  }
}

/** Removes the lock only when it still holds `token` (a lock taken over by another is theirs). */
export async function releaseLock(path: string, token: string): Promise<void> {
  const current = await readParsed(path)
  if (current === 'absent' || current === 'garbage' || current.token !== token) return
  try {
    unlinkSync(path)
  } catch {
    // Gone already, or not ours to remove: a release never fails.
  }
}

/** releaseLock for a process 'exit' listener, where nothing asynchronous runs any more. */
export function releaseLockSync(path: string, token: string): void {
  try {
    if (parseLock(readFileSync(path, 'utf8'))?.token !== token) return
    unlinkSync(path)
  } catch {
    // Already gone.
  }
}

/** The live holder of the lock, or undefined when there is none (absent, stale or garbage). */
export async function liveHolder(path: string): Promise<LockHolder | undefined> {
  const current = await readLock(path)
  return current !== 'absent' && current !== 'garbage' && isAlive(current) ? current : undefined
}

/** The lock as it is; a file that is not a lock is read once more, a moment later, before it counts as garbage. */
export async function readLock(path: string): Promise<LockState> {
  const first = await readParsed(path)
  if (first !== 'garbage') return first
  // A lock written by an older podctl (O_EXCL, then the write) may not hold its content yet.
  await new Promise((resolve) => {
    setTimeout(resolve, GARBAGE_REREAD_MS)
  })
  return readParsed(path)
}

async function readParsed(path: string): Promise<LockState> {
  let text: string
  try {
    // A lock file is a line of JSON on a local disk, read by a supervisor on every turn of every pod (100 a
    // second at 100 pods): fs/promises' readFile is four thread-pool round trips (open, fstat, read, close).
    text = readFileSync(path, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'absent'
    throw error
  }

  return parseLock(text) ?? 'garbage'
}

/** A lock's holder: the JSON format (pid, since and token required), or a bare pid; else undefined. */
export function parseLock(text: string): LockHolder | undefined {
  if (/^\s*\d+\s*$/.test(text)) {
    const pid = Number(text.trim())
    return Number.isSafeInteger(pid) && pid > 0 ? {pid, since: '', holder: 'another podctl', token: ''} : undefined
  }

  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return undefined
  }

  if (typeof value !== 'object' || value === null) return undefined
  const {pid, since, holder, startTicks, token} = value as Record<string, unknown>
  if (!Number.isInteger(pid) || (pid as number) <= 0 || typeof since !== 'string' || typeof token !== 'string') return undefined
  return {
    pid: pid as number,
    since,
    holder: typeof holder === 'string' ? holder : 'another podctl',
    startTicks: Number.isInteger(startTicks) ? (startTicks as number) : undefined,
    token,
  }
}

/** What a lock's temporary file adds to its name (`.<pid>.<8 hex>.tmp`, pid_max 4194304): room a lock's name leaves. */
export const LOCK_TEMPORARY_SUFFIX_BYTES = '.4194304.01234567.tmp'.length

/** Writes the whole lock beside `path`, then links it into place: false when a lock is there already. */
async function createLock(path: string, me: LockHolder): Promise<boolean> {
  // Unique even for two takes by one holder at once: the temporary file is made with O_EXCL too.
  // Synchronous, as readParsed: a supervisor takes a pass lock per pod sync, and each fs/promises
  // call is thread-pool round trips for a file of one line.
  const temporary = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`
  writeFileSync(temporary, `${JSON.stringify(me)}\n`, {mode: 0o600, flag: 'wx'})
  try {
    linkSync(temporary, path)
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw error
  } finally {
    try {
      unlinkSync(temporary)
    } catch {
      // The lock was linked (or not) already: a temporary file left over is no matter.
    }
  }
}

/** unlink, where a file already gone is no matter. */
function removeQuietly(path: string): void {
  try {
    unlinkSync(path)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
}

/** Removes a stale lock unless another holder replaced it since it was read. */
async function removeStale(path: string, seen: LockHolder | 'garbage'): Promise<void> {
  const again = await readParsed(path)
  if (again === 'absent') return
  const unchanged = again === 'garbage' ? seen === 'garbage' : seen !== 'garbage' && again.pid === seen.pid && again.token === seen.token
  if (!unchanged) return
  removeQuietly(path)
}

/**
 * The locks this process holds, released by one 'exit' listener if the process ends without
 * releasing them (process.exit, an uncaught error). The listener is there only while a lock is held.
 */
const heldAtExit = new Map<string, string>()
const releaseAtExit = () => {
  for (const [path, token] of heldAtExit) releaseLockSync(path, token)
}

export function releaseOnExit(path: string, token: string): void {
  if (heldAtExit.size === 0) process.once('exit', releaseAtExit)
  heldAtExit.set(path, token)
}

export function forgetOnExit(path: string, token: string): void {
  if (heldAtExit.get(path) !== token) return
  heldAtExit.delete(path)
  if (heldAtExit.size === 0) process.removeListener('exit', releaseAtExit)
}
