/**
 * Telling a live process from a pid that was reused: a pid names a process only together with its
 * start time (/proc/<pid>/stat field 22, clock ticks since boot), which no later process with the
 * same pid shares during one boot; the boot itself is named by the kernel's boot id. The pod locks
 * (kubelet/config/lock-file.ts) and the sessions (kube/session.ts) record these and ask here
 * whether that process still runs.
 */
import {readFileSync, readlinkSync} from 'node:fs'

/** A process as recorded by whoever wants to know later whether it still runs. */
export interface ProcessIdentity {
  pid: number
  /** Its start time in clock ticks since boot; undefined where /proc could not tell (then the pid alone is trusted). */
  startTicks?: number
}

/** Field 22 of /proc/<pid>/stat (starttime); undefined where there is no /proc or no such process. */
export function startTicksOf(pid: number): number | undefined {
  let text: string
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8')
  } catch {
    return undefined
  }

  // The command name (field 2) is in parentheses and may hold spaces: count fields after its last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ')
  const ticks = Number(fields[22 - 3])
  return Number.isSafeInteger(ticks) ? ticks : undefined
}

/** The pid namespace of a process as /proc names it (`pid:[4026531836]`); undefined without /proc. */
export function pidNamespaceOf(pid: number | 'self'): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/ns/pid`)
  } catch {
    return undefined
  }
}

/** The kernel's id of this boot (a UUID, new at every boot); undefined without /proc. */
export function bootId(): string | undefined {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || undefined
  } catch {
    return undefined
  }
}

/** This process, as others will look for it. */
export function thisProcess(): ProcessIdentity {
  return {pid: process.pid, startTicks: startTicksOf(process.pid)}
}

/** The process still runs: its pid answers and (where /proc tells) it is the same process that was recorded. */
export function isAlive(identity: ProcessIdentity): boolean {
  if (!Number.isSafeInteger(identity.pid) || identity.pid <= 0) return false
  try {
    process.kill(identity.pid, 0)
  } catch (error) {
    // EPERM: it exists but is not ours to signal.
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false
  }

  if (identity.startTicks === undefined) return true
  const ticks = startTicksOf(identity.pid)
  return ticks === undefined || ticks === identity.startTicks
}
