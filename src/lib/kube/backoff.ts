/**
 * client-go's flowcontrol.Backoff as the kubelet uses it (no jitter): per key, the first failure
 * opens a window of `initialMs`, each further failure doubles it up to `maxMs`; an entry untouched
 * for 2 × maxMs starts over. One class for both of the kubelet's ladders, each 10 s → 300 s: image
 * pulls keyed "<podUID>_<image>" and measured from the failure, crash loops keyed by getStableKey
 * and measured from the moment the container finished.
 */

/** The kubelet's image back-off (pkg/kubelet/kubelet.go: imageBackOffPeriod, MaxImageBackOff). */
export const IMAGE_BACKOFF_INITIAL_MS = 10_000
export const IMAGE_BACKOFF_MAX_MS = 300_000
/** The kubelet's crash-loop back-off (pkg/kubelet/kubelet.go: backOffPeriod, MaxContainerBackOff). */
export const CRASH_BACKOFF_INITIAL_MS = 10_000
export const CRASH_BACKOFF_MAX_MS = 300_000
/**
 * Testing knob: shrinks a ladder's first step (the cap keeps its ratio, as 10 s → 300 s), so
 * end-to-end tests see real retries and BackOff events without waiting 10 s each.
 */
const BACKOFF_BASE_ENV = 'PODCTL_BACKOFF_BASE_MS'

export interface BackOffLadder {
  initialMs: number
  maxMs: number
}

/** The ladder, or its shrunk copy when PODCTL_BACKOFF_BASE_MS is set. */
export function ladderFromEnv(initialMs: number, maxMs: number, env: NodeJS.ProcessEnv = process.env): BackOffLadder {
  const base = Number(env[BACKOFF_BASE_ENV])
  if (env[BACKOFF_BASE_ENV] && Number.isFinite(base) && base > 0) return {initialMs: base, maxMs: base * (maxMs / initialMs)}
  return {initialMs, maxMs}
}

export interface BackOffOptions {
  initialMs: number
  maxMs: number
  now?: () => number
}

interface Entry {
  backoffMs: number
  lastUpdate: number
}

export class BackOff {
  readonly initialMs: number
  readonly maxMs: number
  private readonly now: () => number
  private readonly entries = new Map<string, Entry>()

  constructor(options: BackOffOptions) {
    this.initialMs = options.initialMs
    this.maxMs = options.maxMs
    this.now = options.now ?? Date.now
  }

  /** Records a failure (Next): returns the new window length (ms). `at` is when the window starts. */
  next(key: string, at = this.now()): number {
    const entry = this.entries.get(key)
    if (!entry || this.expired(entry, at)) {
      this.entries.set(key, {backoffMs: this.initialMs, lastUpdate: at})
      return this.initialMs
    }

    entry.backoffMs = Math.min(entry.backoffMs * 2, this.maxMs)
    entry.lastUpdate = at
    return entry.backoffMs
  }

  /** IsInBackOffSinceUpdate: true while `at` is inside the window opened by the last failure. */
  isInBackOff(key: string, at = this.now()): boolean {
    const entry = this.entries.get(key)
    if (!entry || this.expired(entry, at)) return false
    return at - entry.lastUpdate < entry.backoffMs
  }

  /**
   * IsInBackOffSince(key, finishedAt), as a wait: how long until the window that started when the
   * container finished closes (0: restart now). The first restart is immediate, since no window exists yet.
   */
  delaySince(key: string, finishedAt: number, at = this.now()): number {
    const entry = this.entries.get(key)
    if (!entry || this.expired(entry, finishedAt)) return 0
    return Math.max(0, entry.backoffMs - (at - finishedAt))
  }

  /** The window currently open for the key (0 when none), for messages. */
  window(key: string): number {
    return this.entries.get(key)?.backoffMs ?? 0
  }

  /** Milliseconds until the current window closes (0 when not in back-off). */
  remaining(key: string, at = this.now()): number {
    const entry = this.entries.get(key)
    if (!entry || !this.isInBackOff(key, at)) return 0
    return entry.lastUpdate + entry.backoffMs - at
  }

  /** The window the next failure would open, without recording it. */
  peekNext(key: string, at = this.now()): number {
    const entry = this.entries.get(key)
    if (!entry || this.expired(entry, at)) return this.initialMs
    return Math.min(entry.backoffMs * 2, this.maxMs)
  }

  /** Forgets the key: the container ran long enough (the kubelet's reset after 10 minutes of running). */
  reset(key: string): void {
    this.entries.delete(key)
  }

  /** The entries, to keep them between processes (sync runs one pass per invocation). */
  snapshot(): Record<string, {backoffMs: number; lastUpdate: number}> {
    return Object.fromEntries([...this.entries].map(([key, entry]) => [key, {...entry}]))
  }

  /** Restores entries a snapshot kept; malformed ones are skipped. */
  restore(entries: Record<string, {backoffMs: number; lastUpdate: number}>): void {
    for (const [key, entry] of Object.entries(entries)) {
      if (Number.isFinite(entry?.backoffMs) && Number.isFinite(entry?.lastUpdate)) this.entries.set(key, {...entry})
    }
  }

  /** Drops expired entries (the kubelet calls GC after each successful pull). */
  gc(at = this.now()): void {
    for (const [key, entry] of this.entries) if (this.expired(entry, at)) this.entries.delete(key)
  }

  private expired(entry: Entry, at: number): boolean {
    return at - entry.lastUpdate > 2 * this.maxMs
  }
}
