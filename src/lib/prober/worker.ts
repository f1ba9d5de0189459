/**
 * One probe worker (pkg/kubelet/prober/worker.go) for one probe of one container: probes at once
 * (after the start-up jitter, if any), then on every period tick or manual trigger; skips probing
 * before initialDelaySeconds from the container's start, runs only the startup probe until the
 * container has started and then only the others; counts successThreshold / failureThreshold
 * before it changes the result; after a liveness or startup failure it holds until a new container.
 */
import type {ProbeModel} from '../manifest/model.js'
import type {ProbeKind} from './prober.js'
import type {ProbeOutcome} from './types.js'

export type ProbeResult = 'success' | 'failure' | 'unknown'

export interface WorkerHooks {
  now(): number
  /** Epoch ms the container started (its State.Running.StartedAt). */
  startedAtMs: number
  /** Whether the container has started (its startup probe succeeded, or it has none). */
  started(): boolean
  /** Runs the probe once (with the prober's retries); resolves, never rejects. */
  probe(signal: AbortSignal): Promise<ProbeOutcome>
  /** After every probe that ran, its outcome. */
  observed(outcome: ProbeOutcome): void
  /** The results manager's Set. */
  set(result: ProbeResult): void
  /** How late (ms) a period tick ran against the worker's grid. */
  late?(lateMs: number): void
}

/** The value a container's result has before its first probe (the worker's initialValue). */
export const INITIAL_RESULT: Record<ProbeKind, ProbeResult> = {liveness: 'success', readiness: 'failure', startup: 'unknown'}

export class ProbeWorker {
  private lastResult: ProbeResult | undefined
  private resultRun = 0
  private onHold = false
  private stopped = false
  private containerRunning = true
  private timer: NodeJS.Timeout | undefined
  private firstTick = 0
  private consumedTicks = 0
  private inFlight: Promise<void> | undefined
  private pendingTrigger = false
  private readonly abort = new AbortController()

  constructor(
    readonly kind: ProbeKind,
    readonly spec: ProbeModel,
    private readonly hooks: WorkerHooks,
  ) {}

  /** Starts the loop after `delayMs` (the kubelet's random start-up jitter; 0 for a new container). */
  start(delayMs = 0): void {
    this.timer = setTimeout(() => {
      this.firstTick = this.hooks.now()
      this.loop()
    }, delayMs)
  }

  /** manualTriggerCh: probe now (once the current probe, if any, is done). */
  trigger(): void {
    if (this.stopped) return
    if (this.inFlight) {
      this.pendingTrigger = true
      return
    }

    clearTimeout(this.timer)
    this.loop()
  }

  /** The container is no longer running: the result is Failure and probing stops. */
  containerStopped(): void {
    if (this.stopped || !this.containerRunning) return
    this.containerRunning = false
    this.hooks.set('failure')
  }

  async stop(): Promise<void> {
    this.stopped = true
    clearTimeout(this.timer)
    this.abort.abort()
    await this.inFlight
  }

  private loop(): void {
    if (this.stopped) return
    this.inFlight = this.doProbe().finally(() => {
      this.inFlight = undefined
      if (this.stopped) return
      if (this.pendingTrigger) {
        this.pendingTrigger = false
        this.loop()
        return
      }

      this.scheduleNextTick()
    })
  }

  /**
   * time.Ticker: ticks on the worker's grid from its first probe; a tick that came while a probe ran
   * waits in the channel (one at most, the rest are dropped), so a slow probe is followed at once.
   */
  private scheduleNextTick(): void {
    const period = this.spec.periodSeconds * 1000
    const now = this.hooks.now()
    const due = this.firstTick + (this.consumedTicks + 1) * period
    if (due <= now) {
      this.consumedTicks = Math.floor((now - this.firstTick) / period)
      this.loop()
      return
    }

    this.timer = setTimeout(() => {
      this.consumedTicks++
      this.hooks.late?.(this.hooks.now() - due)
      this.loop()
    }, due - now)
  }

  private async doProbe(): Promise<void> {
    if (!this.containerRunning || this.onHold) return
    // Whole seconds toward zero, as the kubelet's int32(time.Since(startedAt).Seconds()): a start a
    // moment ahead of this clock (the runtime's, or the same millisecond) counts as 0, not -1.
    const sinceStart = Math.trunc((this.hooks.now() - this.hooks.startedAtMs) / 1000)
    if (sinceStart < this.spec.initialDelaySeconds) return
    const started = this.hooks.started()
    // Startup probes stop once the container started; the others wait for it.
    if (started === (this.kind === 'startup')) return

    const outcome = await this.hooks.probe(this.abort.signal)
    if (this.stopped) return
    this.hooks.observed(outcome)
    // A probe that errored is thrown away.
    if (outcome.status === 'unknown') return
    const result: ProbeResult = outcome.status === 'failure' ? 'failure' : 'success'
    if (this.lastResult === result) {
      this.resultRun++
    } else {
      this.lastResult = result
      this.resultRun = 1
    }

    if (
      (result === 'failure' && this.resultRun < this.spec.failureThreshold) ||
      (result === 'success' && this.resultRun < this.spec.successThreshold)
    ) {
      return
    }

    this.hooks.set(result)
    if ((this.kind === 'liveness' || this.kind === 'startup') && result === 'failure') {
      // The container will be restarted: no more probes until a new container.
      this.onHold = true
      this.resultRun = 0
    }
  }
}
