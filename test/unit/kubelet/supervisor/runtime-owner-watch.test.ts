import {describe, expect, it} from 'vitest'

import type {PodEvent as KubeEvent} from '../../../../src/lib/kube/events.js'
import {OUTSIDE_STOPS_WINDOW_MS, OutsideStops} from '../../../../src/lib/kubelet/workers/outside-stops.js'
import type {ObservedSandbox} from '../../../../src/lib/kubelet/kuberuntime/pod-actions.js'
import {OWNER_CHECK_MS, RuntimeOwnerWatch} from '../../../../src/lib/kubelet/supervisor/runtime-owner-watch.js'

describe('RuntimeOwnerWatch', () => {
  it('checks every 2 s, says once that a kubelet owns the runtime and once that it is gone, and resyncs then', async () => {
    const events: KubeEvent[] = []
    let owner: string | undefined
    let checks = 0
    let resyncs = 0
    const watch = new RuntimeOwnerWatch(
      async () => {
        checks++
        return owner
      },
      (event) => events.push(event),
      () => resyncs++,
    )
    await watch.tick(0)
    await watch.tick(OWNER_CHECK_MS - 1)
    expect(checks).toBe(1)
    owner = 'kubelet pid 7 uses the runtime at unix:///x.sock (its --container-runtime-endpoint)'
    await watch.tick(OWNER_CHECK_MS)
    await watch.tick(2 * OWNER_CHECK_MS)
    expect(watch.owner).toBe(owner)
    owner = undefined
    await watch.tick(3 * OWNER_CHECK_MS)
    expect(watch.owner).toBeUndefined()
    expect(events.map(({reason, type}) => [type, reason])).toEqual([
      ['Warning', 'KubeletOwnsRuntime'],
      ['Normal', 'KubeletGone'],
    ])
    expect(events[0].message).toMatch(
      /^kubelet pid 7 uses the runtime at unix:\/\/\/x\.sock \(its --container-runtime-endpoint\); it kills pods/,
    )
    expect(resyncs).toBe(1)
  })

  it('keeps what it knew when a check fails', async () => {
    let fail = false
    const watch = new RuntimeOwnerWatch(
      async () => {
        if (fail) throw new Error('proc unreadable')
        return 'kubelet pid 7 ...'
      },
      () => {},
      () => {},
    )
    await watch.tick(0)
    fail = true
    await watch.tick(OWNER_CHECK_MS)
    expect(watch.owner).toBe('kubelet pid 7 ...')
  })
})

describe('OutsideStops', () => {
  /** A pass's finding: the sandbox `id`, dead. */
  const dead = (id: string): ObservedSandbox => ({id, attempt: 0, ready: false, hasIp: true, createdAtMs: 0})

  it('lets a dead sandbox be recreated twice within the window and gives up at the third death, with one warning', () => {
    const events: KubeEvent[] = []
    const stops = new OutsideStops('web_default', (event) => events.push(event))
    const asked = [0, 1000, 2000, 3000].map((at, index) => {
      const may = stops.mayRecreate(at, [dead(`s${index}`)])
      stops.made()
      return may
    })
    expect(asked).toEqual([true, true, false, false])
    expect(stops.gaveUp).toBe(true)
    expect(events).toHaveLength(1)
    expect(events[0]).toMatchObject({type: 'Warning', reason: 'StoppedOutside', object: 'web_default'})
  })

  it('counts one death once while its recreation fails before making a sandbox and is tried again', () => {
    const stops = new OutsideStops('web_default', () => {})
    // RunPodSandbox past its deadline three times: no sandbox made, one death.
    for (const at of [0, 1000, 2000, 3000]) expect(stops.mayRecreate(at, [dead('first')])).toBe(true)
    stops.made()
    expect(stops.mayRecreate(4000, [dead('first'), dead('second')])).toBe(true)
    expect(stops.gaveUp).toBe(false)
    // A sandbox made and then rolled back (its containers failed in it) died too: its death counts.
    stops.made()
    expect(stops.mayRecreate(5000, [dead('first'), dead('second')])).toBe(false)
  })

  it('never counts a recreation for a change, while a sandbox is still ready', () => {
    const stops = new OutsideStops('web_default', () => {})
    for (const at of [0, 1000, 2000, 3000]) {
      expect(stops.mayRecreate(at, [{...dead(`s${at}`), ready: true}])).toBe(true)
      stops.made()
    }

    expect(stops.gaveUp).toBe(false)
  })

  it('forgets deaths older than the window', () => {
    const stops = new OutsideStops('web_default', () => {})
    for (const at of [0, 1000, OUTSIDE_STOPS_WINDOW_MS + 500]) {
      expect(stops.mayRecreate(at, [dead(`s${at}`)])).toBe(true)
      stops.made()
    }

    expect(stops.gaveUp).toBe(false)
  })
})
