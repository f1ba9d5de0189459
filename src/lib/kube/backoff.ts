/**
 * client-go's flowcontrol.Backoff as the kubelet uses it (no jitter): per key, the first failure
 * opens a window of `initialMs`, each further failure doubles it up to `maxMs`; an entry untouched
 * for 2 × maxMs starts over. The kubelet's image pulls use 10 s → 300 s, keyed "<podUID>_<image>".
 */
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

  /** Records a failure: returns the new window length (ms). */
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

  reset(key: string): void {
    this.entries.delete(key)
  }

  /** Drops expired entries (the kubelet calls GC after each successful pull). */
  gc(at = this.now()): void {
    for (const [key, entry] of this.entries) if (this.expired(entry, at)) this.entries.delete(key)
  }

  private expired(entry: Entry, at: number): boolean {
    return at - entry.lastUpdate > 2 * this.maxMs
  }
}
