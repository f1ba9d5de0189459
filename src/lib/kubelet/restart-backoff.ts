import {BACKOFF_BASE_ENV} from '../images/image-manager.js'

/**
 * The kubelet's crash-loop back-off for restarting containers (kuberuntime_manager.go doBackOff
 * with client-go's flowcontrol.Backoff, 10 s doubling to 300 s, keyed per container spec): the
 * window is measured from the moment the container *finished*, so the first restart is immediate,
 * the next waits 10 s after the second exit, then 20 s, 40 s, ...
 */
export const CRASH_BACKOFF_INITIAL_MS = 10_000
export const CRASH_BACKOFF_MAX_MS = 300_000

interface Entry {
  backoffMs: number
  lastUpdate: number
}

export class RestartBackOff {
  private readonly entries = new Map<string, Entry>()

  constructor(
    readonly initialMs = CRASH_BACKOFF_INITIAL_MS,
    readonly maxMs = CRASH_BACKOFF_MAX_MS,
  ) {}

  /** The ladder from the environment (PODCTL_BACKOFF_BASE_MS shrinks it for tests, keeping its shape). */
  static fromEnv(env: NodeJS.ProcessEnv = process.env): RestartBackOff {
    const base = Number(env[BACKOFF_BASE_ENV])
    if (env[BACKOFF_BASE_ENV] && Number.isFinite(base) && base > 0) {
      return new RestartBackOff(base, base * (CRASH_BACKOFF_MAX_MS / CRASH_BACKOFF_INITIAL_MS))
    }

    return new RestartBackOff()
  }

  /** IsInBackOffSince(key, finishedAt): how long to wait before a restart (0: restart now). */
  delay(key: string, finishedAt: number, now = Date.now()): number {
    const entry = this.entries.get(key)
    if (!entry || finishedAt - entry.lastUpdate > 2 * this.maxMs) return 0
    return Math.max(0, entry.backoffMs - (now - finishedAt))
  }

  /** Next(key, finishedAt): records the restart and widens the window for the following one. */
  record(key: string, finishedAt: number): number {
    const entry = this.entries.get(key)
    if (!entry || finishedAt - entry.lastUpdate > 2 * this.maxMs) {
      this.entries.set(key, {backoffMs: this.initialMs, lastUpdate: finishedAt})
      return this.initialMs
    }

    entry.backoffMs = Math.min(entry.backoffMs * 2, this.maxMs)
    entry.lastUpdate = finishedAt
    return entry.backoffMs
  }

  /** The window currently open for the key (for messages). */
  window(key: string): number {
    return this.entries.get(key)?.backoffMs ?? 0
  }
}
