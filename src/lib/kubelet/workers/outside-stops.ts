/**
 * A pod whose sandbox keeps dying is being stopped by someone else: a worker recreates a sandbox only
 * when it found it dead, and nothing in podctl stops a sandbox it means to keep. Beside an agent that
 * kills every pod it did not start (a kubelet podctl could not see, in another PID namespace), each
 * recreation is killed again within seconds; after OUTSIDE_STOPS of them in OUTSIDE_STOPS_WINDOW_MS the
 * worker stops recreating the pod and keeps watching, instead of fighting for as long as it runs.
 */
export const OUTSIDE_STOPS = 3
export const OUTSIDE_STOPS_WINDOW_MS = 60_000

export function outsideStopsMessage(): string {
  return (
    `The pod's sandbox was stopped from outside podctl ${OUTSIDE_STOPS} times within ${OUTSIDE_STOPS_WINDOW_MS / 1000}s ` +
    '(a kubelet or another agent owns this runtime): podctl stops recreating it and keeps watching; find what stops it, then run podctl sync'
  )
}

export class OutsideStops {
  private readonly recreations: number[] = []

  /** A recreation of a dead sandbox at `now`; true when that makes enough within the window to give up. */
  recreated(now: number): boolean {
    this.recreations.push(now)
    while (this.recreations.length > 0 && now - this.recreations[0] > OUTSIDE_STOPS_WINDOW_MS) this.recreations.shift()
    return this.recreations.length >= OUTSIDE_STOPS
  }
}
