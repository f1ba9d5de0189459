/**
 * A pod whose sandbox keeps dying is being stopped by someone else: nothing in podctl stops a sandbox
 * it means to keep. Beside an agent that kills every pod it did not start (a kubelet podctl cannot see,
 * in another PID namespace), each new sandbox is killed again within seconds; so once a worker has
 * found the pod's sandbox dead OUTSIDE_STOPS times within OUTSIDE_STOPS_WINDOW_MS, it stops recreating
 * the pod and keeps watching, instead of fighting for as long as it runs.
 */
import {type EventSink, warningEvent} from '../../kube/events.js'
import type {ObservedSandbox} from '../kuberuntime/pod-actions.js'

export const OUTSIDE_STOPS = 3
export const OUTSIDE_STOPS_WINDOW_MS = 60_000

export class OutsideStops {
  /** The worker gave up on the pod: it is not recreated again. */
  gaveUp = false
  private readonly deaths: number[] = []
  /** A sandbox was made since the last death counted: its death is a new one. */
  private madeSinceDeath = true

  constructor(
    private readonly pod: string,
    private readonly events: EventSink,
  ) {}

  /** Told when a pass made a sandbox for the pod (RunPodSandbox answered), even one rolled back later. */
  made(): void {
    this.madeSinceDeath = true
  }

  /**
   * Asked before a sandbox is recreated, at `now`, with the sandboxes the pass found: a recreation for a change
   * (one is still ready) is not a death. Else a sandbox died: false, and one warning, once sandboxes died too
   * often. A death counts once: a recreation that failed before it made a sandbox (a loaded runtime's
   * RunPodSandbox past its deadline) and is tried again is not another stop from outside.
   */
  mayRecreate(now: number, found: readonly ObservedSandbox[]): boolean {
    if (found.some((sandbox) => sandbox.ready)) return true
    if (this.gaveUp) return false
    if (this.madeSinceDeath) this.deaths.push(now)
    this.madeSinceDeath = false
    while (this.deaths.length > 0 && now - this.deaths[0] > OUTSIDE_STOPS_WINDOW_MS) this.deaths.shift()
    if (this.deaths.length < OUTSIDE_STOPS) return true
    this.gaveUp = true
    const message =
      `The pod's sandbox was stopped from outside podctl ${OUTSIDE_STOPS} times within ${OUTSIDE_STOPS_WINDOW_MS / 1000}s ` +
      '(a kubelet or another agent owns this runtime): podctl stops recreating it and keeps watching; ' +
      'find what stops it, then run podctl sync'
    this.events(warningEvent('StoppedOutside', message, this.pod))
    return false
  }
}
