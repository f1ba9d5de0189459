/**
 * One supervisor per pod. `sync --watch` and `run --supervise` hold `<pod dir>/supervisor.lock`
 * for as long as they supervise the pod, so a second supervisor neither restarts its containers nor
 * runs its probes a second time. The file is a lock file of lock-file.ts — the same format and stale
 * rule as the per-pass locks of pod-lock.ts (held only while one pass runs): pid, since, a short
 * description, the holder's start time and a random token (two holders in one process differ). A
 * lock whose process is gone (the pid is dead, or reused by another process) or that stays garbage
 * after one short re-read is stale and is taken over.
 */
import {forgetOnExit, liveHolder, type LockClaim, type LockHolder, newHolder, releaseLock, releaseOnExit, takeLock} from './lock-file.js'
import {podDirectory} from '../core/pod-directory.js'
import {currentSignature} from '../../util/file-signature.js'

export const SUPERVISOR_LOCK_FILE = 'supervisor.lock'

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
  /**
   * The lock file each held lock is, as this instance last saw it: while it is the same file
   * (util/file-signature.ts) nobody took it over, so a turn needs one stat instead of a read and a parse.
   */
  private readonly files = new Map<string, {signature: string; holder: LockHolder}>()
  private readonly me: LockHolder

  constructor(
    private readonly podDirRoot: string,
    description: string,
  ) {
    this.me = newHolder(description)
  }

  private get token(): string {
    return this.me.token
  }

  /** Takes (or keeps) the pod's lock; when another live process holds it, says who. */
  async take(uid: string): Promise<LockClaim> {
    const path = supervisorLockPath(this.podDirRoot, uid)
    const file = this.files.get(uid)
    if (file && this.held.has(uid) && currentSignature(path) === file.signature) return {held: true, holder: file.holder}

    // `since` is when this pod's lock is taken, not when the supervisor started.
    const claim = await takeLock(path, {...this.me, since: new Date().toISOString()})
    if (claim.held) {
      this.held.set(uid, path)
      releaseOnExit(path, this.token)
      const signature = currentSignature(path)
      if (signature !== undefined) this.files.set(uid, {signature, holder: claim.holder})
    } else {
      this.drop(uid)
    }

    return claim
  }

  /** Lets go of one pod's lock (or of all of them): only a file that still holds our token is removed. */
  async release(uid?: string): Promise<void> {
    const uids = uid === undefined ? [...this.held.keys()] : [uid]
    await Promise.all(
      uids.map(async (key) => {
        const path = this.held.get(key)
        if (!path) return
        this.drop(key)
        await releaseLock(path, this.token)
      }),
    )
  }

  /** The pods whose lock this instance holds, by uid. */
  holding(): string[] {
    return [...this.held.keys()]
  }

  private drop(uid: string): void {
    this.files.delete(uid)
    const path = this.held.get(uid)
    if (path === undefined) return
    this.held.delete(uid)
    forgetOnExit(path, this.token)
  }
}

/** Who supervises the pod, when a live process holds its lock (for `status`); undefined otherwise. */
export async function supervisorOf(podDirRoot: string, uid: string): Promise<LockHolder | undefined> {
  return liveHolder(supervisorLockPath(podDirRoot, uid))
}
