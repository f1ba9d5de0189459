/** Bounded concurrency and abortable waiting for bulk runtime calls. */
import {availableParallelism} from 'node:os'

import {InterruptedError} from '../errors.js'

/**
 * ExecSync calls of exec probes in flight at once. containerd 1.6 with runc serves ExecSync at a
 * fixed rate bound by CPU (each is a `runc exec`): on the 2-core lab VM about 13 per second whether
 * 2 or 50 are in flight, only slower each. Unbounded, a burst of probes makes every one of them slow
 * enough to hit its timeoutSeconds, so healthy containers fail their probes; bounded, a probe the
 * runtime cannot serve yet waits its turn and its timeout counts from when the runtime gets it.
 */
export const EXEC_PROBES_IN_FLIGHT = Math.max(2, 2 * availableParallelism())

/** At most this many status calls (PodSandboxStatus, ContainerStatus, ...) in flight per listing. */
export const RUNTIME_CALLS_IN_FLIGHT = 8

/** Maps with at most `limit` calls in flight, keeping input order; used for bulk runtime calls. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length)
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const index = next++
      results[index] = await fn(items[index], index)
    }
  }

  await Promise.all(Array.from({length: Math.min(Math.max(1, limit), items.length)}, worker))
  return results
}

/** Like mapLimit, but every item settles: one failure never stops the others. */
export function settleLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<PromiseSettledResult<R>[]> {
  return mapLimit(items, limit, (item, index) =>
    fn(item, index).then(
      (value): PromiseSettledResult<R> => ({status: 'fulfilled', value}),
      (error): PromiseSettledResult<R> => ({status: 'rejected', reason: error}),
    ),
  )
}

/** At most `limit` tasks at once, FIFO; a task whose signal aborts while queued never starts. */
export class Limiter {
  private active = 0
  private readonly queue: Array<() => void> = []

  constructor(
    private readonly limit: number,
    /** The InterruptedError's message when a queued task is aborted. */
    private readonly abortedMessage = 'interrupted while waiting for a free slot',
  ) {}

  /**
   * Runs `task` once a slot is free. The task may call `release` to give its slot back before it
   * ends (a pod that has started and is only waiting); calling it again, or ending, frees nothing twice.
   */
  async run<T>(task: (release: () => void) => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (signal?.aborted) throw new InterruptedError('interrupted')
    if (this.active < this.limit) this.active++
    else {
      // A finishing task hands its slot straight to us, so the count never overshoots.
      await new Promise<void>((resolve, reject) => {
        const start = () => {
          signal?.removeEventListener('abort', onAbort)
          resolve()
        }

        const onAbort = () => {
          const index = this.queue.indexOf(start)
          if (index !== -1) this.queue.splice(index, 1)
          reject(new InterruptedError(this.abortedMessage))
        }

        this.queue.push(start)
        signal?.addEventListener('abort', onAbort, {once: true})
      })
    }

    let held = true
    const release = () => {
      if (!held) return
      held = false
      const next = this.queue.shift()
      if (next) next()
      else this.active--
    }

    try {
      return await task(release)
    } finally {
      release()
    }
  }
}

/** Waits `ms`, or rejects with InterruptedError as soon as `signal` aborts (also when it already has). */
export async function sleep(ms: number, signal?: AbortSignal, interruptedMessage = 'interrupted'): Promise<void> {
  // Loaded on the first wait, not with the module: the listings import this module for mapLimit and never wait.
  const {setTimeout: delay} = await import('node:timers/promises')
  try {
    await delay(ms, undefined, {signal})
  } catch (error) {
    if (signal?.aborted) throw new InterruptedError(interruptedMessage)
    throw error
  }
}

/**
 * A loop's pause between two rounds: over after `ms`, as soon as `signal` aborts (also when it
 * already has), or when `wake()` is called because something came in that the next round must see.
 */
export class Pause {
  private wakeUp?: () => void

  wait(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer)
        signal.removeEventListener('abort', done)
        this.wakeUp = undefined
        resolve()
      }

      const timer = setTimeout(done, ms)
      this.wakeUp = done
      if (signal.aborted) done()
      else signal.addEventListener('abort', done, {once: true})
    })
  }

  /** Ends the pause in progress, if there is one. */
  wake(): void {
    this.wakeUp?.()
  }
}
