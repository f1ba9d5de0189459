/**
 * One supervisor per pod. `sync --watch` and `run --supervise` hold `<pod dir>/supervisor.lock`
 * for as long as they supervise the pod, so a second supervisor neither restarts its containers nor
 * runs its probes a second time. The file is created with O_EXCL (mode 0600) and holds who holds it:
 * pid, since (RFC 3339), a short description and a random token (two holders in one process differ).
 * A lock whose process is gone (SIGKILL, reboot: the pid is dead, or reused by a process that started
 * later than the holder did) or that stays garbage after one short re-read is stale and is taken over.
 * These are not the per-pass locks of pod-lock.ts, held only while one sync pass runs.
 */
import {randomBytes} from 'node:crypto'
import {readFileSync, unlinkSync} from 'node:fs'
import {open, readFile, unlink} from 'node:fs/promises'

import {podDirectory} from './pod-dirs.js'

export const SUPERVISOR_LOCK_FILE = 'supervisor.lock'
/** How long a lock that is not (yet) valid JSON is given before it counts as garbage. */
export const GARBAGE_REREAD_MS = 100

export interface SupervisorHolder {
  pid: number
  /** When it took the lock (RFC 3339). */
  since: string
  /** What holds it, e.g. `podctl sync --watch`. */
  holder: string
  /** The holder's start time in clock ticks since boot (/proc/<pid>/stat field 22), to tell a reused pid. */
  startTicks?: number
  token: string
}

export type LockClaim = {held: true; holder: SupervisorHolder} | {held: false; holder: SupervisorHolder}

export function supervisorLockPath(podDirRoot: string, uid: string): string {
  return `${podDirectory(podDirRoot, uid)}/${SUPERVISOR_LOCK_FILE}`
}

/**
 * The supervisor locks one process holds. take() is called on every turn: it takes the lock, says
 * who else holds it, or notices that ours was taken from us (and takes it back if it vanished).
 * release() removes only locks this instance holds; it is idempotent and also runs at process exit.
 */
export class SupervisorLocks {
  private readonly held = new Map<string, string>()
  private readonly token = randomBytes(8).toString('hex')
  private readonly onExit = () => {
    for (const path of this.held.values()) if (ownsSync(path, this.token)) unlinkQuietly(path)
  }

  constructor(
    private readonly podDirRoot: string,
    private readonly description: string,
  ) {}

  /** Takes (or keeps) the pod's lock; when another live process holds it, says who. */
  async take(uid: string): Promise<LockClaim> {
    const path = supervisorLockPath(this.podDirRoot, uid)
    for (;;) {
      const current = await readHolder(path)
      if (current === 'absent') {
        const mine = await this.create(path)
        if (mine) {
          this.hold(uid, path)
          return {held: true, holder: mine}
        }

        continue
      }

      if (current !== 'garbage' && current.token === this.token) {
        this.hold(uid, path)
        return {held: true, holder: current}
      }

      if (current !== 'garbage' && isAlive(current)) {
        this.drop(uid)
        return {held: false, holder: current}
      }

      // Stale: its holder is gone. Remove it — unless another supervisor replaced it meanwhile — and
      // race for it again (O_EXCL decides who wins).
      const again = await readParsed(path)
      const unchanged =
        again === 'garbage' ? current === 'garbage' : again !== 'absent' && current !== 'garbage' && again.token === current.token
      if (!unchanged) continue
      await unlink(path).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT') throw error
      })
    }
  }

  /** Lets go of one pod's lock (or of all of them): only a file that still holds our token is removed. */
  async release(uid?: string): Promise<void> {
    const uids = uid === undefined ? [...this.held.keys()] : [uid]
    await Promise.all(
      uids.map(async (key) => {
        const path = this.held.get(key)
        if (!path) return
        this.drop(key)
        const current = await readHolder(path)
        if (current !== 'absent' && current !== 'garbage' && current.token === this.token) await unlink(path).catch(() => {})
      }),
    )
  }

  /** The pods whose lock this instance holds, by uid. */
  holding(): string[] {
    return [...this.held.keys()]
  }

  private drop(uid: string): void {
    this.held.delete(uid)
    if (this.held.size === 0) process.removeListener('exit', this.onExit)
  }

  private hold(uid: string, path: string): void {
    if (this.held.size === 0) process.once('exit', this.onExit)
    this.held.set(uid, path)
  }

  private async create(path: string): Promise<SupervisorHolder | undefined> {
    const holder: SupervisorHolder = {
      pid: process.pid,
      since: new Date().toISOString(),
      holder: this.description,
      startTicks: startTicksOf(process.pid),
      token: this.token,
    }
    let handle
    try {
      handle = await open(path, 'wx', 0o600)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') return undefined
      throw error
    }

    try {
      await handle.writeFile(`${JSON.stringify(holder)}\n`)
    } finally {
      await handle.close()
    }

    return holder
  }
}

/** Who supervises the pod, when a live process holds its lock (for `status`); undefined otherwise. */
export async function supervisorOf(podDirRoot: string, uid: string): Promise<SupervisorHolder | undefined> {
  const current = await readHolder(supervisorLockPath(podDirRoot, uid))
  return current !== 'absent' && current !== 'garbage' && isAlive(current) ? current : undefined
}

async function readHolder(path: string): Promise<SupervisorHolder | 'absent' | 'garbage'> {
  const first = await readParsed(path)
  if (first !== 'garbage') return first
  // A lock created a moment ago may not hold its JSON yet: give its holder one short moment to write it.
  await new Promise((resolve) => {
    setTimeout(resolve, GARBAGE_REREAD_MS)
  })
  return readParsed(path)
}

async function readParsed(path: string): Promise<SupervisorHolder | 'absent' | 'garbage'> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'absent'
    throw error
  }

  return parseHolder(text) ?? 'garbage'
}

export function parseHolder(text: string): SupervisorHolder | undefined {
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

function ownsSync(path: string, token: string): boolean {
  try {
    return parseHolder(readFileSync(path, 'utf8'))?.token === token
  } catch {
    return false
  }
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path)
  } catch {
    // Already gone.
  }
}

/** The holder's process still runs: its pid answers and (where /proc tells) it is the same process that took the lock. */
export function isAlive(holder: Pick<SupervisorHolder, 'pid' | 'startTicks'>): boolean {
  try {
    process.kill(holder.pid, 0)
  } catch (error) {
    // EPERM: it exists but is not ours to signal.
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false
  }

  if (holder.startTicks === undefined) return true
  const ticks = startTicksOf(holder.pid)
  return ticks === undefined || ticks === holder.startTicks
}

/** Field 22 of /proc/<pid>/stat (starttime); undefined where there is no /proc. */
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
