/**
 * One SyncPod (issue 17): kuberuntime/sync-pod.ts's syncPod, asked through the pod workers, is the only code that starts, kills and
 * restarts containers, for `sync` and for `run --wait X` alike, against the in-process fake runtime.
 */
import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, afterEach, beforeAll, describe, expect, it, vi} from 'vitest'

import type {EnsureImageOptions, EnsureImageResult} from '../../../../src/lib/images/image-manager.js'
import {BackOff} from '../../../../src/lib/kube/backoff.js'
import type {PodEvent} from '../../../../src/lib/kube/events.js'
import {stableKey} from '../../../../src/lib/kube/helpers.js'
import {createSandboxForPod} from '../../../../src/lib/kubelet/kuberuntime/create-sandbox.js'
import {syncPod, type SyncSettings} from '../../../../src/lib/kubelet/kuberuntime/sync-pod.js'
import {podSandboxes} from '../../../../src/lib/kubelet/kuberuntime/sandbox.js'
import {runPod} from '../../../../src/lib/kubelet/run/run-pod.js'
import {parseDocuments} from '../../../../src/lib/manifest/load.js'
import type {PodModel} from '../../../../src/lib/manifest/model.js'
import {parsePod} from '../../../../src/lib/manifest/pod.js'
import {FakePodRuntime} from '../../../support/fake-pod-runtime.js'

const POD = `
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: shop}
spec:
  initContainers:
  - {name: one, image: "busybox:1.36"}
  - {name: two, image: "busybox:1.36"}
  containers:
  - {name: app, image: "nginx:1.27"}
  - {name: side, image: "nginx:1.27"}
`

let fake: FakePodRuntime
let events: PodEvent[]

beforeAll(async () => {
  fake = await new FakePodRuntime().start()
})

afterEach(() => {
  fake.reset()
  vi.restoreAllMocks()
})

afterAll(async () => {
  await fake.close()
})

const images = {
  async ensureImage(options: EnsureImageOptions): Promise<EnsureImageResult> {
    return {image: options.image, imageRef: `sha256:${options.image}`, pulled: false, message: '', policy: 'IfNotPresent', attempts: 0}
  },
}

async function pod(uid: string): Promise<PodModel> {
  const [document] = await parseDocuments(POD, 'pod.yaml')
  return parsePod(document, 'pod.yaml', {newUid: () => uid})
}

function settings(): SyncSettings {
  const root = mkdtempSync(join(tmpdir(), 'podctl-one-sync-pod-'))
  return {logsRoot: join(root, 'logs'), podDirRoot: join(root, 'pods'), hostResolvConf: 'nameserver 10.0.0.2\n', nodeMemoryBytes: 1024 ** 3}
}

function deps(backOff: BackOff, now = Date.now) {
  events = []
  return {client: fake.client, images, events: (event: PodEvent) => events.push(event), signal: new AbortController().signal, backOff, now}
}

/** Names of the containers created, in order. */
const created = () => fake.calls.filter((call) => call.method === 'createContainer').map((call) => call.request.config.metadata.name)

/** The newest instance of a container exits with `exitCode` (the fake keeps app containers running). */
function crash(name: string, exitCode = 1): void {
  const instance = [...fake.containers.values()].findLast((container) => container.metadata.name === name)!
  instance.state = 'CONTAINER_EXITED'
  instance.exitCode = exitCode
  instance.finishedAt = String(BigInt(Date.now()) * 1_000_000n)
}

describe('one SyncPod', () => {
  it("a new pod's first pass creates the init containers one after another, in order, then the app containers", async () => {
    const options = settings()
    const model = await pod('uid-first')
    await createSandboxForPod(fake.client, model, 0, options, {events() {}})
    fake.calls.length = 0
    const result = await syncPod(model, await podSandboxes(fake.client, model), options, deps(new BackOff({initialMs: 1000, maxMs: 8000})))
    expect(result.failure).toBeUndefined()
    expect(created()).toEqual(['one', 'two', 'app', 'side'])
    expect(result.did).toEqual([
      'started init container one (new)',
      'started init container two (new)',
      'started app (new)',
      'started side (new)',
    ])
    // Each init container ran to completion before the next one was created.
    const methods = fake.methods()
    const creates = methods.flatMap((method, index) => (method === 'createContainer' ? [index] : []))
    expect(methods.slice(creates[0], creates[1])).toContain('containerStatus')
    expect(methods.slice(creates[1], creates[2])).toContain('containerStatus')
  })

  it('restarts a crashed container on the next pass, then holds it back by the crash back-off until its window has passed', async () => {
    const options = settings()
    const model = await pod('uid-crash')
    await createSandboxForPod(fake.client, model, 0, options, {events() {}})
    let offset = 0
    const backOff = new BackOff({initialMs: 1000, maxMs: 8000, now: () => Date.now() + offset})
    const pass = async () =>
      syncPod(
        model,
        await podSandboxes(fake.client, model),
        options,
        deps(backOff, () => Date.now() + offset),
      )
    expect((await pass()).failure).toBeUndefined()

    crash('app')
    // The first restart is immediate (no window yet); it opens a 1 s window.
    const second = await pass()
    expect(second.did).toEqual(['started app (restart 1)'])
    expect(backOff.window(stableKey(model, model.containers[0]))).toBe(1000)

    crash('app')
    const third = await pass()
    expect(third.did).toEqual(['app in back-off for 1 s (exited 1)'])
    expect(third.backOffUntil).toBeGreaterThan(Date.now())
    expect(events.map((event) => `${event.reason} ${event.object}`)).toEqual(['BackOff web_shop/app'])

    // Once the window has passed, the next pass restarts it, and the window doubles.
    offset = 1500
    const fourth = await pass()
    expect(fourth.did).toEqual(['started app (restart 2)'])
    expect(backOff.window(stableKey(model, model.containers[0]))).toBe(2000)
    // Older exited instances go; the newest exited one stays (its last termination state).
    const apps = [...fake.containers.values()].filter((container) => container.metadata.name === 'app')
    expect(apps.map((container) => [container.metadata.attempt, container.state])).toEqual([
      [1, 'CONTAINER_EXITED'],
      [2, 'CONTAINER_RUNNING'],
    ])
  })

  it("run's waits are SyncPod passes with the run's one back-off: a container that crashes during run is restarted by a pass", async () => {
    const model = await pod('uid-run')
    const backOff = new BackOff({initialMs: 100, maxMs: 800})
    const next = vi.spyOn(backOff, 'next')
    const delaySince = vi.spyOn(backOff, 'delaySince')
    // The app crashes once, as soon as it first runs.
    const crashOnce = setInterval(() => {
      const app = [...fake.containers.values()].find((container) => container.metadata.name === 'app')
      if (app?.state === 'CONTAINER_RUNNING' && app.metadata.attempt === 0) {
        crash('app')
        clearInterval(crashOnce)
      }
    }, 1)
    const outcome = await runPod(
      model,
      [],
      {
        ...settings(),
        wait: 'running',
        replace: false,
        keepOnFailure: false,
        remove: false,
        pollMs: 20,
        settleMs: 0,
        restartBackOff: backOff,
      },
      {client: fake.client, images, events() {}, signal: new AbortController().signal},
    ).finally(() => clearInterval(crashOnce))
    expect(outcome.failure).toBeUndefined()
    const key = stableKey(model, model.containers[0])
    // The pass that restarted the app recorded its failure in the run's back-off; the run's own watch read the same object.
    expect(next).toHaveBeenCalledWith(key, expect.any(Number))
    expect(delaySince.mock.calls.some(([called]) => called === key)).toBe(true)
    expect(backOff.window(key)).toBe(100)
    expect(outcome.result.containers.find((container) => container.name === 'app')).toMatchObject({state: 'Running', attempt: 1})
    expect(created()).toEqual(['one', 'two', 'app', 'side', 'app'])
  })
})
