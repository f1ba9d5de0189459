/**
 * Keeps `podctl ui` current, as the supervisor's loop keeps itself (kubelet/supervisor/): where the
 * runtime streams container events (containerd 1.7+, CRI-O) an event brings a refresh at once, and
 * the listing every RELIST_MS is the safety net and the CPU figures' clock; without the stream (containerd
 * 1.6) it lists every POLL_MS. Never more than one refresh a second, however many events come. A
 * runtime that stops answering is said in the view and asked again every second until it answers;
 * then the stream is tried again (it may be a new runtime).
 */
import type {CriClient} from '../cri/client.js'
import {asPodctlError} from '../errors.js'
import type {ContainerEventResponse} from '../../generated/runtime/v1/api.js'
import type {PodEvent} from '../kube/events.js'
import {ContainerEventStream, type WatchMode} from '../kubelet/supervisor/container-event-stream.js'
import type {HeaderSampler, NodeHeader} from './node-header.js'
import type {NodeSampler, NodeSnapshot} from './node-snapshot.js'

export const MIN_GAP_MS = 1000
const POLL_MS = 1000
const RELIST_MS = 2000
/** Runtime events kept per pod sandbox, for describe. */
const EVENTS_KEPT = 30

export interface NodeWatchOptions {
  client: CriClient
  sampler: NodeSampler
  header: HeaderSampler
  signal: AbortSignal
  onSnapshot: (snapshot: NodeSnapshot, header: NodeHeader) => void
  onLost: (message: string) => void
  /** How the view stays current, in words, when that changes. */
  onMode?: (mode: WatchMode, message: string) => void
}

export interface SeenEvent {
  at: number
  type: string
  containerId: string
}

export class NodeWatch {
  private readonly stream: ContainerEventStream
  private wake?: () => void
  private pending = false
  private lost = false
  /** Sandbox ID → the runtime's container events for it, newest last. */
  readonly events = new Map<string, SeenEvent[]>()

  constructor(private readonly options: NodeWatchOptions) {
    this.stream = new ContainerEventStream({
      client: options.client,
      signal: options.signal,
      pollMs: POLL_MS,
      relistMs: RELIST_MS,
      events: (event: PodEvent) => options.onMode?.(this.stream.mode, event.message),
      onModeChange: (_mode, previous) => previous === 'events' && this.refreshSoon(),
      onEvent: (event) => this.seen(event),
    })
  }

  /** Refreshes until the signal aborts. */
  async run(): Promise<void> {
    const {signal} = this.options
    this.stream.start()
    while (!signal.aborted) {
      const started = Date.now()
      this.pending = false
      await this.refresh()
      const period = this.stream.mode === 'events' && !this.lost ? RELIST_MS : POLL_MS
      await this.pause(started, this.pending && !this.lost ? started + MIN_GAP_MS : started + period)
    }

    await this.stream.stopped()
  }

  /** Something changed: refresh now, or as soon as a second has passed since the last refresh. */
  refreshSoon(): void {
    this.pending = true
    this.wake?.()
  }

  private async refresh(): Promise<void> {
    const {sampler, header, signal} = this.options
    try {
      const snapshot = await sampler.sample(signal)
      if (this.lost) header.forgetVersion()
      const top = await header.sample(snapshot)
      if (signal.aborted) return
      if (this.lost) this.stream.runtimeRestarted()
      this.lost = false
      this.options.onSnapshot(snapshot, top)
    } catch (error) {
      if (signal.aborted) return
      this.lost = true
      this.options.onLost(asPodctlError(error).message)
    }
  }

  private seen(event: ContainerEventResponse): void {
    const sandbox = event.podSandboxStatus?.id
    if (sandbox) {
      const list = this.events.get(sandbox) ?? []
      list.push({
        at: Number(BigInt(event.createdAt || '0') / 1_000_000n) || Date.now(),
        type: event.containerEventType,
        containerId: event.containerId,
      })
      this.events.set(sandbox, list.slice(-EVENTS_KEPT))
    }

    this.refreshSoon()
  }

  /** Waits until `dueAt`; a change cuts that short, to a second after `started` (the last refresh). */
  private pause(started: number, dueAt: number): Promise<void> {
    const {signal} = this.options
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer)
        signal.removeEventListener('abort', done)
        this.wake = undefined
        resolve()
      }

      let timer = setTimeout(done, Math.max(0, dueAt - Date.now()))
      signal.addEventListener('abort', done, {once: true})
      this.wake = () => {
        // A lost runtime is asked once a second whatever happens.
        if (this.lost) return
        clearTimeout(timer)
        timer = setTimeout(done, Math.max(0, started + MIN_GAP_MS - Date.now()))
      }
    })
  }
}
