/**
 * One podctl at a time per pod full name. The kubelet never races itself (one pod worker per pod);
 * two podctl processes can, and a check-then-create without a lock left two live copies of one pod.
 * A pass lock is `<pod-dir-root>/.locks/<name>_<namespace>.lock`, a lock file of lock-file.ts (the
 * format and stale rule the supervisor lock shares): a lock whose holder died (SIGKILL, power loss,
 * its pid reused since) is taken over, never waited on.
 */
import {mkdir} from 'node:fs/promises'
import {join} from 'node:path'

import {DeadlineExceededError, InterruptedError} from '../../errors.js'
import {fittedFileName} from '../../util/file-names.js'
import {NAME_MAX} from '../../util/path-component.js'
import {forgetOnExit, LOCK_TEMPORARY_SUFFIX_BYTES, type LockHolder, newHolder, releaseLock, releaseOnExit, takeLock} from './lock-file.js'

export const LOCK_POLL_MS = 100

export interface PodLockOptions {
  /** Epoch ms: give up waiting then (DeadlineExceeded). No deadline → wait until the signal aborts. */
  deadline?: number
  signal?: AbortSignal
  /** Told once per pod when another process holds its lock, with that process's pid. */
  onWait?: (fullName: string, holderPid: number) => void
  /** What the lock says holds it (default `podctl`). */
  holder?: string
}

/** Held locks; release() is idempotent and also runs if the process exits without calling it. */
export interface PodLocks {
  release(): Promise<void>
}

export function lockDirectory(podDirRoot: string): string {
  return join(podDirRoot, '.locks')
}

/**
 * The pass lock of one pod: `<pod-dir-root>/.locks/<name>_<namespace>.lock`; a full name too long
 * for one file name (a 253-character pod name) is cut and given a digest, leaving room for the
 * lock's temporary file beside it (lock-file.ts).
 */
export function podLockPath(podDirRoot: string, fullName: string): string {
  return join(lockDirectory(podDirRoot), fittedFileName(fullName, '.lock', NAME_MAX - LOCK_TEMPORARY_SUFFIX_BYTES))
}

/** Takes the locks of every pod (sorted, so two processes with overlapping pods cannot deadlock). */
export async function lockPods(podDirRoot: string, fullNames: readonly string[], options: PodLockOptions = {}): Promise<PodLocks> {
  const directory = lockDirectory(podDirRoot)
  await mkdir(directory, {recursive: true, mode: 0o700})
  // One holder per acquisition: a second lockPods of the same pod in this process waits like any other.
  const me = newHolder(options.holder ?? 'podctl')
  const held: string[] = []
  const release = async () => {
    await Promise.all(
      held.splice(0).map(async (path) => {
        forgetOnExit(path, me.token)
        await releaseLock(path, me.token)
      }),
    )
  }

  try {
    for (const fullName of [...new Set(fullNames)].sort()) {
      const path = podLockPath(podDirRoot, fullName)
      await acquire(path, fullName, me, options)
      held.push(path)
      releaseOnExit(path, me.token)
    }
  } catch (error) {
    await release()
    throw error
  }

  return {release}
}

async function acquire(path: string, fullName: string, me: LockHolder, options: PodLockOptions): Promise<void> {
  let told = false
  for (;;) {
    if (options.signal?.aborted) throw new InterruptedError(`interrupted while waiting for the lock of pod ${fullName}`)
    const claim = await takeLock(path, me)
    if (claim.held) return
    const holder = claim.holder.pid
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
