/**
 * One podctl at a time per pod full name. The kubelet never races itself (one pod worker per pod);
 * two podctl processes can, and a check-then-create without a lock left two live copies of one pod.
 * A lock is a file `<pod-dir-root>/.locks/<name>_<namespace>.lock` created with O_EXCL and holding
 * the owner's pid: a lock whose owner died (SIGKILL, power loss) is taken over, never waited on.
 */
import {mkdir, open, readFile, unlink} from 'node:fs/promises'
import {unlinkSync} from 'node:fs'
import {join} from 'node:path'

import {DeadlineExceededError, InterruptedError} from '../errors.js'

export const LOCK_POLL_MS = 100

export interface PodLockOptions {
  /** Epoch ms: give up waiting then (DeadlineExceeded). No deadline → wait until the signal aborts. */
  deadline?: number
  signal?: AbortSignal
  /** Told once per pod when another process holds its lock, with that process's pid. */
  onWait?: (fullName: string, holderPid: number) => void
}

/** Held locks; release() is idempotent and also runs if the process exits without calling it. */
export interface PodLocks {
  release(): Promise<void>
}

export function lockDirectory(podDirRoot: string): string {
  return join(podDirRoot, '.locks')
}

/** Takes the locks of every pod (sorted, so two processes with overlapping pods cannot deadlock). */
export async function lockPods(podDirRoot: string, fullNames: readonly string[], options: PodLockOptions = {}): Promise<PodLocks> {
  const directory = lockDirectory(podDirRoot)
  await mkdir(directory, {recursive: true, mode: 0o700})
  const held: string[] = []
  const releaseOnExit = () => {
    for (const path of held) {
      try {
        unlinkSync(path)
      } catch {
        // Already gone: nothing to release.
      }
    }
  }

  process.once('exit', releaseOnExit)
  const release = async () => {
    process.removeListener('exit', releaseOnExit)
    await Promise.all(held.splice(0).map((path) => unlink(path).catch(() => {})))
  }

  try {
    for (const fullName of [...new Set(fullNames)].sort()) {
      const path = join(directory, `${fullName}.lock`)
      await acquire(path, fullName, options)
      held.push(path)
    }
  } catch (error) {
    await release()
    throw error
  }

  return {release}
}

async function acquire(path: string, fullName: string, options: PodLockOptions): Promise<void> {
  let told = false
  for (;;) {
    if (options.signal?.aborted) throw new InterruptedError(`interrupted while waiting for the lock of pod ${fullName}`)
    if (await tryCreate(path)) return
    const holder = await holderPid(path)
    if (holder === undefined || !isAlive(holder)) {
      // The owner is gone: its lock is stale. Remove it and race for it again (O_EXCL decides).
      await unlink(path).catch(() => {})
      continue
    }

    if (!told) {
      options.onWait?.(fullName, holder)
      told = true
    }

    if (options.deadline !== undefined && Date.now() + LOCK_POLL_MS > options.deadline) {
      throw new DeadlineExceededError(
        `pod ${fullName} is locked by another podctl (pid ${holder}) and it did not finish in time; wait for it or raise --timeout`,
      )
    }

    await new Promise((resolve) => {
      setTimeout(resolve, LOCK_POLL_MS)
    })
  }
}

async function tryCreate(path: string): Promise<boolean> {
  try {
    const handle = await open(path, 'wx', 0o600)
    await handle.writeFile(`${process.pid}\n`)
    await handle.close()
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw error
  }
}

/** Undefined while the owner is still writing its pid (or for garbage): treated as stale only if it stays so. */
async function holderPid(path: string): Promise<number | undefined> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch {
    return undefined
  }

  const pid = Number.parseInt(text, 10)
  if (Number.isInteger(pid) && pid > 0) return pid
  // A lock created a moment ago may not hold its pid yet: give its owner one poll to write it.
  await new Promise((resolve) => {
    setTimeout(resolve, LOCK_POLL_MS)
  })
  const again = Number.parseInt(await readFile(path, 'utf8').catch(() => ''), 10)
  return Number.isInteger(again) && again > 0 ? again : undefined
}

function isAlive(pid: number): boolean {
  if (pid === process.pid) return true
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: it exists but is not ours to signal.
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/**
 * The pod's lock if no other live process holds it now, else undefined (no waiting): a supervisor's
 * turn skips a pod that a `sync`, `sync -f` or `run` is working on and looks again on its next turn.
 */
export async function tryLockPod(podDirRoot: string, fullName: string): Promise<PodLocks | undefined> {
  try {
    return await lockPods(podDirRoot, [fullName], {deadline: Date.now()})
  } catch (error) {
    if (error instanceof DeadlineExceededError) return undefined
    throw error
  }
}
