/**
 * The kubelet's crash back-off (kuberuntime_manager.go doBackOff, kubelet.go): one ladder per pod
 * and container (getStableKey), 10 s doubling to 5 min, checked against the exited instance's
 * FinishedAt before every restart; a container that ran 10 minutes starts its ladder over. SyncPod
 * (kuberuntime/sync-pod.ts) applies it; `run`'s waits (run/pod-wait.ts) read it to know what is held back.
 */
import {BackOff, CRASH_BACKOFF_INITIAL_MS, CRASH_BACKOFF_MAX_MS, ladderFromEnv} from '../../kube/backoff.js'
import type {ObservedContainer} from './pod-actions.js'

/** A container that ran this long before it exited starts its back-off over (the kubelet's 10 minutes). */
export const BACKOFF_RESET_AFTER_MS = 10 * 60_000

export function crashBackOff(now?: () => number): BackOff {
  return new BackOff({...ladderFromEnv(CRASH_BACKOFF_INITIAL_MS, CRASH_BACKOFF_MAX_MS), now})
}

/** Whether the instance ran BACKOFF_RESET_AFTER_MS before it exited. */
export function ranPastBackOff(previous: ObservedContainer): boolean {
  return (
    previous.startedAtMs !== null &&
    previous.finishedAtMs !== null &&
    previous.finishedAtMs - previous.startedAtMs >= BACKOFF_RESET_AFTER_MS
  )
}

/**
 * The kubelet's doBackOff, read only: how long the restart of the container whose newest instance
 * is `previous` must still wait (0: it may start now). Only an exited instance is backed off, and
 * not one that ran 10 minutes (its ladder starts over).
 */
export function restartDelay(backOff: BackOff, key: string, previous: ObservedContainer | undefined, now: number): number {
  if (previous?.state !== 'Exited' || previous.finishedAtMs === null || ranPastBackOff(previous)) return 0
  return backOff.delaySince(key, previous.finishedAtMs, now)
}

/** Per ladder, the back-off step (the exited instance's finishedAt) each key last had a BackOff event for. */
const backOffReported = new WeakMap<BackOff, Map<string, number>>()

/**
 * Whether this refused restart is the first of its back-off step: the kubelet's event recorder
 * aggregates repeats of one reason and message, so `sync --watch` says BackOff once per step, not every pass.
 */
export function firstOfStep(backOff: BackOff, key: string, finishedAtMs: number): boolean {
  const reported = backOffReported.get(backOff) ?? new Map<string, number>()
  backOffReported.set(backOff, reported)
  if (reported.get(key) === finishedAtMs) return false
  reported.set(key, finishedAtMs)
  return true
}
