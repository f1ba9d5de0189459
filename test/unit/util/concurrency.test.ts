import {describe, expect, it} from 'vitest'

import {InterruptedError} from '../../../src/lib/errors.js'
import {Limiter, mapLimit, sleep} from '../../../src/lib/util/concurrency.js'

/** A promise and the function that settles it, to drive tasks step by step. */
function gate(): {promise: Promise<void>; open: () => void} {
  let open!: () => void
  const promise = new Promise<void>((resolve) => {
    open = resolve
  })
  return {promise, open}
}

const tick = () =>
  new Promise((resolve) => {
    setImmediate(resolve)
  })

describe('Limiter', () => {
  it('runs at most `limit` tasks at once, in the order they came', async () => {
    const slots = new Limiter(2)
    const gates = [gate(), gate(), gate()]
    const started: number[] = []
    const done = gates.map((g, index) =>
      slots.run(async () => {
        started.push(index)
        await g.promise
        return index
      }),
    )
    await tick()
    expect(started).toEqual([0, 1])
    gates[1].open()
    await tick()
    expect(started).toEqual([0, 1, 2])
    gates[0].open()
    gates[2].open()
    expect(await Promise.all(done)).toEqual([0, 1, 2])
  })

  it('lets a task give its slot back early, once, while it goes on', async () => {
    const slots = new Limiter(1)
    const first = gate()
    const started: string[] = []
    const a = slots.run(async (release) => {
      started.push('a')
      release()
      release() // a second release frees nothing more
      await first.promise
      return 'a'
    })
    const b = slots.run(async () => {
      started.push('b')
      return 'b'
    })
    const c = slots.run(async () => {
      started.push('c')
      return 'c'
    })
    expect(await b).toBe('b')
    expect(await c).toBe('c')
    expect(started).toEqual(['a', 'b', 'c'])
    first.open()
    expect(await a).toBe('a')
    // With every slot back, exactly one task runs at a time again.
    const hold = gate()
    const order: string[] = []
    const d = slots.run(async () => {
      order.push('d')
      await hold.promise
    })
    const e = slots.run(async () => {
      order.push('e')
    })
    await tick()
    expect(order).toEqual(['d'])
    hold.open()
    await Promise.all([d, e])
    expect(order).toEqual(['d', 'e'])
  })

  it('a task whose signal aborts while queued never starts', async () => {
    const slots = new Limiter(1, 'stopped while queued')
    const hold = gate()
    const busy = slots.run(() => hold.promise)
    const controller = new AbortController()
    let ran = false
    const queued = slots.run(async () => {
      ran = true
    }, controller.signal)
    controller.abort()
    await expect(queued).rejects.toThrow(new InterruptedError('stopped while queued'))
    hold.open()
    await busy
    expect(ran).toBe(false)
  })
})

describe('mapLimit', () => {
  it('keeps the input order whatever order the calls finish in', async () => {
    const result = await mapLimit([30, 10, 20], 2, async (ms) => {
      await new Promise((resolve) => {
        setTimeout(resolve, ms)
      })
      return ms
    })
    expect(result).toEqual([30, 10, 20])
  })
})

describe('sleep', () => {
  it('resolves once the time is up', async () => {
    await expect(sleep(1)).resolves.toBeUndefined()
    await expect(sleep(1, new AbortController().signal)).resolves.toBeUndefined()
  })

  it('rejects with InterruptedError and the given message when the signal aborts, also before it starts', async () => {
    const early = new AbortController()
    early.abort()
    await expect(sleep(60_000, early.signal, 'stopped early')).rejects.toEqual(new InterruptedError('stopped early'))
    const late = new AbortController()
    const waiting = sleep(60_000, late.signal)
    await tick()
    late.abort()
    await expect(waiting).rejects.toBeInstanceOf(InterruptedError)
    await expect(waiting).rejects.toThrow('interrupted')
  })
})
