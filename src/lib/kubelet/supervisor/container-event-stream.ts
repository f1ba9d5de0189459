/**
 * The supervisor's container event stream (CRI GetContainerEvents), as the kubelet's Evented PLEG
 * reads it: each event makes the supervisor list at once (waking the pod's worker early), while the
 * one-second listing stays as the safety net, so a lost event costs at most a second. The stream
 * tells what changed, not the whole truth: the supervisor lists the runtime on a wake-up and never
 * trusts an event's statuses. A runtime without the call (containerd 1.6 answers
 * UNIMPLEMENTED) or a stream that breaks leaves the supervisor polling every second, like the
 * kubelet falling back to the generic PLEG. A broken stream is subscribed again with a growing
 * pause, up to MAX_STREAM_RETRIES failures in a row (the kubelet's eventedPlegMaxStreamRetries);
 * after that, or after UNIMPLEMENTED, only a runtime restart makes it try again (the new runtime
 * may be an upgraded one). The mode is printed once when it is known and again only when it changes.
 */
import {CRI_CLIENT_VERSION, type CriClient} from '../../cri/client.js'
import {EVENTS_DISABLED_HINT, splitEventsReason} from '../../cri/event-sharing.js'
import {asPodctlError, formatMs, UnimplementedError} from '../../errors.js'
import type {ContainerEventResponse} from '../../../generated/runtime/v1/api.js'
import {type EventSink, normalEvent} from '../../kube/events.js'
import {Pause} from '../../util/concurrency.js'

/** 'starting' until the stream proves itself or fails; the loop polls meanwhile. */
export type WatchMode = 'starting' | 'events' | 'polling'

export interface EventStreamTiming {
  /**
   * A stream open this long without failing is taken as working: containerd sends nothing, not even
   * a header, before its first event, while UNIMPLEMENTED comes back in one round trip.
   */
  settleMs: number
  /** The pause before subscribing again after the stream broke; doubled per failure in a row. */
  retryMs: number
  retryMaxMs: number
  /** Failures in a row (no event in between) before the stream is left alone until the runtime restarts. */
  maxRetries: number
}

export const DEFAULT_EVENT_STREAM_TIMING: EventStreamTiming = {settleMs: 1000, retryMs: 1000, retryMaxMs: 15_000, maxRetries: 5}

export interface ContainerEventStreamOptions {
  client: CriClient
  events: EventSink
  /** Ends the stream (Ctrl-C, the end of supervision). */
  signal: AbortSignal
  /** Every event the runtime sends; the supervisor keeps those of its own pods. */
  onEvent: (event: ContainerEventResponse) => void
  /** The mode changed: the loop takes its new period (and relists when the stream failed, as the kubelet does). */
  onModeChange: (mode: WatchMode, previous: WatchMode) => void
  /** What the loop lists every second while polling and every few seconds beside the stream, for the messages. */
  pollMs: number
  relistMs: number
  timing?: Partial<EventStreamTiming>
}

type Outcome = {kind: 'unimplemented' | 'disabled' | 'broken'; message: string} | {kind: 'stopped'}

export class ContainerEventStream {
  mode: WatchMode = 'starting'
  private readonly timing: EventStreamTiming
  private failures = 0
  private running?: Promise<void>
  private readonly pausing = new Pause()

  constructor(private readonly options: ContainerEventStreamOptions) {
    this.timing = {...DEFAULT_EVENT_STREAM_TIMING, ...options.timing}
  }

  /** Subscribes in the background; never throws. */
  start(): void {
    this.running ??= this.subscribeLoop().finally(() => {
      this.running = undefined
    })
  }

  /**
   * The runtime answers again after it was unreachable: it may have been restarted, or upgraded to
   * one with the stream. A stream left alone is tried again; a pending retry goes at once.
   */
  runtimeRestarted(): void {
    this.failures = 0
    if (this.running) this.pausing.wake()
    else this.start()
  }

  /** Resolves once the stream is closed (the caller aborts `signal` first). */
  async stopped(): Promise<void> {
    await this.running
  }

  private async subscribeLoop(): Promise<void> {
    const {signal} = this.options
    // A runtime that splits its events between subscribers: taking them would starve the kubelet or `podctl events`.
    const split = await this.splitReason()
    if (split) {
      this.setMode('polling', `${split}: listing it every ${formatMs(this.options.pollMs)}, leaving its events to other listeners`)
      return
    }

    while (!signal.aborted) {
      const outcome = await this.subscribeOnce()
      if (outcome.kind === 'stopped' || signal.aborted) return
      if (outcome.kind === 'unimplemented') {
        this.setMode(
          'polling',
          `The runtime has no container event stream (${outcome.message}; containerd 1.7+ and CRI-O have one): ` +
            `listing it every ${formatMs(this.options.pollMs)}`,
        )
        return
      }

      if (outcome.kind === 'disabled') {
        this.setMode('polling', `${outcome.message}: listing it every ${formatMs(this.options.pollMs)}`)
        return
      }

      this.failures++
      const giveUp = this.failures >= this.timing.maxRetries
      const pauseMs = Math.min(this.timing.retryMs * 2 ** (this.failures - 1), this.timing.retryMaxMs)
      const then = giveUp ? 'until the runtime restarts' : `subscribing again in ${formatMs(pauseMs)}`
      this.setMode(
        'polling',
        `The container event stream broke (${outcome.message}): listing it every ${formatMs(this.options.pollMs)}, ${then}`,
      )
      if (giveUp) return
      await this.pause(pauseMs)
    }
  }

  private async subscribeOnce(): Promise<Outcome> {
    const {client, signal} = this.options
    let settle: NodeJS.Timeout | undefined
    let settled = false
    try {
      await client.runtimeStream(
        'getContainerEvents',
        {},
        (event) => {
          clearTimeout(settle)
          settled = true
          // A stream that delivers is working: its next break starts the retries afresh.
          this.failures = 0
          this.setMode('events')
          this.options.onEvent(event)
        },
        {
          signal,
          onOpen: () => {
            settle = setTimeout(() => {
              settled = true
              this.setMode('events')
            }, this.timing.settleMs)
          },
        },
      )
      if (signal.aborted) return {kind: 'stopped'}
      // Ended by the runtime, without an error, before it said anything: CRI-O with its events turned off.
      if (!settled) return {kind: 'disabled', message: `The runtime ended its container event stream at once (${EVENTS_DISABLED_HINT})`}
      return {kind: 'broken', message: 'the runtime ended it'}
    } catch (error) {
      if (signal.aborted) return {kind: 'stopped'}
      const failure = asPodctlError(error)
      if (failure instanceof UnimplementedError) return {kind: 'unimplemented', message: 'GetContainerEvents is unimplemented'}
      return {kind: 'broken', message: failure.message}
    } finally {
      clearTimeout(settle)
    }
  }

  /** Why the runtime's events would be taken from other listeners (cri/event-sharing.ts); undefined when they would not. */
  private async splitReason(): Promise<string | undefined> {
    const version = await this.options.client.runtime('version', {version: CRI_CLIENT_VERSION}).catch(() => undefined)
    return splitEventsReason(version)
  }

  private setMode(mode: WatchMode, why?: string): void {
    const previous = this.mode
    if (mode === previous) return
    this.mode = mode
    this.options.onModeChange(mode, previous)
    // Printed on a change only: retries that keep failing stay quiet.
    const relist = formatMs(this.options.relistMs)
    const message = mode === 'events' ? `Woken by the runtime's container events; listing it every ${relist} as a safety net` : (why ?? '')
    this.options.events(normalEvent(mode === 'events' ? 'ContainerEvents' : 'Polling', message, 'supervisor'))
  }

  private pause(ms: number): Promise<void> {
    return this.pausing.wait(ms, this.options.signal)
  }
}
