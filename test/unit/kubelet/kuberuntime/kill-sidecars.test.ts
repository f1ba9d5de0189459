import {setTimeout as sleep} from 'node:timers/promises'

import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'

import {killPod} from '../../../../src/lib/kubelet/kuberuntime/kill.js'
import {type FakeContainer, FakePodRuntime, type FakeSandbox} from '../../../support/fake-pod-runtime.js'

/**
 * killPod of a pod with a sidecar against the in-process fake runtime (the real wire protocol): the
 * sidecar's StopContainer waits for the app's, and is sent what is left of the one grace period.
 */
let fake: FakePodRuntime

beforeAll(async () => {
  fake = await new FakePodRuntime().start()
})

afterEach(() => fake.reset())

afterAll(async () => {
  await fake.close()
})

function running(sandbox: FakeSandbox, name: string, grace: number, sidecarIndex?: number): FakeContainer {
  const container: FakeContainer = {
    id: `${name}-${sandbox.id}`,
    podSandboxId: sandbox.id,
    metadata: {name, attempt: 0},
    image: {image: 'busybox:1.36'},
    imageRef: 'sha256:busybox',
    state: 'CONTAINER_RUNNING',
    createdAt: '1',
    startedAt: '1',
    finishedAt: '0',
    exitCode: 0,
    reason: '',
    labels: {'io.kubernetes.container.name': name, 'io.kubernetes.pod.uid': sandbox.metadata.uid},
    annotations: {
      'io.kubernetes.pod.terminationGracePeriod': String(grace),
      ...(sidecarIndex === undefined ? {} : {'io.podctl.containerType': 'init', 'io.podctl.sidecar': String(sidecarIndex)}),
    },
    mounts: [],
  }
  fake.containers.set(container.id, container)
  return container
}

/** [container name, timeout] of every StopContainer that reached the runtime, in arrival order. */
function stops(): Array<[string, string]> {
  return fake.calls
    .filter((call) => call.method === 'stopContainer')
    .map((call) => [fake.containers.get(call.request.containerId)?.metadata.name ?? '?', call.request.timeout])
}

describe('killPod of a pod with a sidecar (fake runtime)', () => {
  it('stops the app with the grace period; the sidecar once the app has stopped, with what is left of it', async () => {
    const sandbox = fake.addSandbox({name: 'web', namespace: 'shop', uid: 'u1', attempt: 0})
    running(sandbox, 'proxy', 10, 0)
    running(sandbox, 'app', 10)
    // The app takes a while to stop (held in the runtime for over a second).
    const held = fake.holdNext('stopContainer')
    const started = performance.now()
    const killing = killPod(fake.client, [sandbox] as never, {keep: true})
    let releasedAfterMs = 0
    try {
      await held.arrived
      await sleep(1100)
      // The sidecar waits for its turn: only the app's StopContainer has reached the runtime.
      expect(stops()).toEqual([['app', '10']])
    } finally {
      releasedAfterMs = performance.now() - started
      held.release()
    }

    const result = await killing
    const tookMs = performance.now() - started
    expect(result.containersStopped).toBe(2)
    const [app, proxy] = stops()
    expect(app).toEqual(['app', '10'])
    expect(proxy[0]).toBe('proxy')
    // The sidecar waited at least until the release, at most the whole kill: those whole seconds come off the 10.
    const timeout = Number(proxy[1])
    expect(timeout).toBeLessThanOrEqual(10 - Math.floor(releasedAfterMs / 1000))
    expect(timeout).toBeGreaterThanOrEqual(Math.max(2, 10 - Math.floor(tookMs / 1000)))
    expect([...fake.containers.values()].map((container) => container.state)).toEqual(['CONTAINER_EXITED', 'CONTAINER_EXITED'])
  })

  it('does not wait past the grace period for an app that has not stopped: the sidecar then gets the 2 s minimum', async () => {
    const sandbox = fake.addSandbox({name: 'web', namespace: 'shop', uid: 'u2', attempt: 0})
    running(sandbox, 'app', 1)
    running(sandbox, 'proxy', 1, 0)
    const held = fake.holdNext('stopContainer')
    const killing = killPod(fake.client, [sandbox] as never, {keep: true})
    try {
      await held.arrived
      // The app's StopContainer stays in the runtime until the sidecar's has arrived too.
      for (const end = Date.now() + 10_000; stops().length < 2 && Date.now() < end;) await sleep(20)
      // Both with the 2 s minimum: the app's 1 s grace period is raised to it, the sidecar waited all of it.
      expect(stops()).toEqual([
        ['app', '2'],
        ['proxy', '2'],
      ])
    } finally {
      held.release()
    }

    await expect(killing).resolves.toMatchObject({containersStopped: 2})
  })
})
