/**
 * Pull progress while PullImage runs: containerd's ingests (containerd/content.ts) polled every
 * 250 ms as long as at least one pull is in flight, turned into layer progress (ingests.ts) for a
 * view (progress-view.ts). One poller per command: the ingests of one namespace cannot be told
 * apart by image, so concurrent pulls share one display. An endpoint without containerd's content
 * service (CRI-O, ...) is asked once; the view then hears nothing more and the spinner stays as it is.
 */
import type {IngestSource} from '../containerd/content.js'
import {IngestTracker, type LayerProgress, type LayerStep} from './ingests.js'

export const POLL_INTERVAL_MS = 250
/** Ingests last touched this long before the first pull began still count (the two clocks are one machine's). */
const CLOCK_SLACK_MS = 1000

/** What a pull reports to: told as each PullImage is sent; the function it returns is awaited when the call returns. */
export interface PullProgress {
  pullStarted(): () => Promise<void>
}

/** Where progress goes: a TTY display takes `layers`, plain lines take `step`. */
export interface ProgressView {
  /** Every poll's layers (and the last ones once the pulls in flight are over). */
  layers?(layers: LayerProgress[]): void
  step?(step: LayerStep): void
  /** No content service to watch (said once, for --debug). */
  unavailable?(why: string): void
}

export interface PollerOptions {
  intervalMs?: number
  now?: () => number
}

export class IngestPoller implements PullProgress {
  private active = 0
  private loop?: Promise<void>
  private source?: Promise<IngestSource>
  private tracker?: IngestTracker
  private unsupported = false
  private wake?: () => void
  private readonly intervalMs: number
  private readonly now: () => number

  constructor(
    private readonly openSource: () => Promise<IngestSource>,
    private readonly view: ProgressView,
    options: PollerOptions = {},
  ) {
    this.intervalMs = options.intervalMs ?? POLL_INTERVAL_MS
    this.now = options.now ?? Date.now
  }

  pullStarted(): () => Promise<void> {
    if (this.unsupported) return async () => {}
    this.active++
    this.tracker ??= new IngestTracker(this.now() - CLOCK_SLACK_MS)
    this.loop ??= this.run()
    let ended = false
    return async () => {
      if (!ended) {
        ended = true
        this.active--
        this.wake?.()
      }

      await this.loop
    }
  }

  /** Polls while pulls are in flight; once none is, one last poll tells which layers were committed. */
  private async run(): Promise<void> {
    try {
      for (;;) {
        while (this.active > 0 && !this.unsupported) {
          await this.poll()
          await this.pause()
        }

        if (!this.unsupported) await this.poll()
        // A pull sent during that last poll keeps the loop going.
        if (this.active === 0 || this.unsupported) break
      }

      this.tracker?.dropUnfinished()
      if (!this.unsupported) this.view.layers?.(this.tracker?.snapshot() ?? [])
    } finally {
      const source = this.source
      this.source = undefined
      this.loop = undefined
      ;(await source?.catch(() => undefined))?.close()
    }
  }

  private async poll(): Promise<void> {
    this.source ??= this.openSource()
    let listing
    try {
      listing = await (await this.source).listStatuses()
    } catch (error) {
      listing = {kind: 'unsupported' as const, why: String(error)}
    }

    if (listing.kind === 'failed') return
    if (listing.kind === 'unsupported') {
      this.unsupported = true
      this.view.unavailable?.(listing.why)
      return
    }

    const tracker = this.tracker!
    for (const step of tracker.update(listing.statuses, this.now())) this.view.step?.(step)
    this.view.layers?.(tracker.snapshot())
  }

  /** The interval, cut short when the last pull in flight ends. */
  private pause(): Promise<void> {
    if (this.active === 0) return Promise.resolve()
    return new Promise((resolve) => {
      const timer = setTimeout(done, this.intervalMs)
      function done() {
        clearTimeout(timer)
        resolve()
      }

      this.wake = () => {
        if (this.active === 0) done()
      }
    })
  }
}
