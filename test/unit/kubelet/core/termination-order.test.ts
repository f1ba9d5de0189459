import {afterEach, beforeEach, describe, expect, it, vi} from 'vitest'

import {graceLeftAfterPreStop, stopTimeoutSeconds} from '../../../../src/lib/kubelet/kuberuntime/kill.js'
import {TerminationOrdering, terminationPrerequisites} from '../../../../src/lib/kubelet/core/termination-order.js'

const app = (id: string) => ({id, annotations: {}})
const init = (id: string) => ({id, annotations: {'io.podctl.containerType': 'init'}})
const sidecar = (id: string, index: number) => ({id, annotations: {'io.podctl.containerType': 'init', 'io.podctl.sidecar': String(index)}})

describe('terminationPrerequisites', () => {
  it('makes each sidecar wait for the app containers and the sidecars declared after it, and nobody else wait', () => {
    const containers = [sidecar('proxy', 0), init('setup'), sidecar('logger', 2), app('web'), app('worker')]
    expect(Object.fromEntries(terminationPrerequisites(containers))).toEqual({
      proxy: ['web', 'worker', 'logger'],
      setup: [],
      logger: ['web', 'worker'],
      web: [],
      worker: [],
    })
  })

  it('treats a container without podctl annotations (crictl, the kubelet) as an app container', () => {
    expect(Object.fromEntries(terminationPrerequisites([app('c1'), app('c2')]))).toEqual({c1: [], c2: []})
  })
})

describe('the grace period shared by a pod kill', () => {
  it('takes the preStop hook and then the wait for its turn out of the grace period, in whole seconds', () => {
    expect(stopTimeoutSeconds(10, 0, false, 0)).toBe(10)
    expect(stopTimeoutSeconds(10, 0, false, 3999)).toBe(7)
    expect(stopTimeoutSeconds(10, 3500, false, 4200)).toBe(3)
    expect(stopTimeoutSeconds(30, 0, false, 12_900)).toBe(18)
    expect(graceLeftAfterPreStop(10, 3500)).toBe(7)
  })

  it('leaves a sidecar that waited the whole grace period the 2 s minimum', () => {
    // The app ignored SIGTERM: the sidecar waited all 10 s for it (a little more, as the runtime answers late).
    expect(stopTimeoutSeconds(10, 0, false, 10_050)).toBe(2)
    expect(stopTimeoutSeconds(10, 0, false, 9990)).toBe(2)
    // A preStop hook that used the whole grace period: no wait, and still 2 s.
    expect(graceLeftAfterPreStop(10, 10_000)).toBe(0)
    expect(stopTimeoutSeconds(10, 10_000, false, 0)).toBe(2)
  })

  it('is 0 with force, and then nothing waits', () => {
    expect(stopTimeoutSeconds(10, 0, true, 5000)).toBe(0)
    expect(graceLeftAfterPreStop(10, 0, true)).toBe(0)
  })
})

describe('TerminationOrdering', () => {
  beforeEach(() => {
    vi.useFakeTimers({toFake: ['setTimeout', 'clearTimeout', 'performance']})
  })

  afterEach(() => {
    vi.useRealTimers()
  })

  it('lets a container without prerequisites go at once', async () => {
    const ordering = new TerminationOrdering([app('web'), sidecar('proxy', 0)])
    await expect(ordering.waitForTurn('web', 10)).resolves.toBe(0)
  })

  it('lets a sidecar go as soon as the containers it waits for have stopped', async () => {
    const ordering = new TerminationOrdering([app('web'), sidecar('proxy', 0), sidecar('logger', 1)])
    let waited: number | undefined
    void ordering.waitForTurn('proxy', 10).then((ms) => (waited = ms))
    await vi.advanceTimersByTimeAsync(3000)
    ordering.containerTerminated('web')
    await vi.advanceTimersByTimeAsync(1000)
    expect(waited).toBeUndefined()
    ordering.containerTerminated('logger')
    await vi.advanceTimersByTimeAsync(0)
    expect(waited).toBe(4000)
  })

  it('waits at most the grace period it is given, and not at all with none left or on abort', async () => {
    const ordering = new TerminationOrdering([app('web'), sidecar('proxy', 0)])
    let waited: number | undefined
    void ordering.waitForTurn('proxy', 10).then((ms) => (waited = ms))
    await vi.advanceTimersByTimeAsync(9999)
    expect(waited).toBeUndefined()
    await vi.advanceTimersByTimeAsync(1)
    expect(waited).toBe(10_000)

    await expect(ordering.waitForTurn('proxy', 0)).resolves.toBe(0)
    const abort = new AbortController()
    const aborted = ordering.waitForTurn('proxy', 10, abort.signal)
    abort.abort()
    await expect(aborted).resolves.toBe(0)
  })
})
