/**
 * The pod workers (issue 32): the one way to act on a pod, one piece of work at a time per pod, and a
 * termination that is recorded before it begins and never lost, against the in-process fake runtime.
 */
import {existsSync, mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import * as grpc from '@grpc/grpc-js'
import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'

import type {EnsureImageOptions, EnsureImageResult} from '../../../../src/lib/images/image-manager.js'
import type {PodEvent} from '../../../../src/lib/kube/events.js'
import {desiredPodPath, recordDesiredPod} from '../../../../src/lib/kubelet/config/desired-state.js'
import {readTermination, terminationPath} from '../../../../src/lib/kubelet/config/termination-record.js'
import {podSandboxes} from '../../../../src/lib/kubelet/kuberuntime/sandbox.js'
import type {SyncSettings} from '../../../../src/lib/kubelet/kuberuntime/sync-pod.js'
import {PodWorkers} from '../../../../src/lib/kubelet/workers/pod-workers.js'
import {parseDocuments} from '../../../../src/lib/manifest/load.js'
import type {PodModel} from '../../../../src/lib/manifest/model.js'
import {parsePod} from '../../../../src/lib/manifest/pod.js'
import {FakePodRuntime} from '../../../support/fake-pod-runtime.js'

const POD = `
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: shop}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - {name: app, image: "nginx:1.27"}
`

let fake: FakePodRuntime
let events: PodEvent[]

beforeAll(async () => {
  fake = await new FakePodRuntime().start()
})

afterEach(() => {
  fake.reset()
})

afterAll(async () => {
  await fake.close()
})

const images = {
  async ensureImage(options: EnsureImageOptions): Promise<EnsureImageResult> {
    return {image: options.image, imageRef: `sha256:${options.image}`, pulled: false, message: '', policy: 'IfNotPresent', attempts: 0}
  },
}

function settings(): SyncSettings {
  const root = mkdtempSync(join(tmpdir(), 'podctl-pod-workers-'))
  return {logsRoot: join(root, 'logs'), podDirRoot: join(root, 'pods'), hostResolvConf: 'nameserver 10.0.0.2\n', nodeMemoryBytes: 1024 ** 3}
}

function deps() {
  events = []
  return {client: fake.client, images, events: (event: PodEvent) => events.push(event), signal: new AbortController().signal}
}

/** A pod run through the workers as `run` does: recorded, created, one SyncPod pass. */
async function running(workers: PodWorkers, options: SyncSettings, uid = 'uid-web'): Promise<PodModel> {
  const [document] = await parseDocuments(POD, 'pod.yaml')
  const pod = parsePod(document, 'pod.yaml', {newUid: () => uid})
  await recordDesiredPod(options.podDirRoot, pod, fake.client.runtimeEndpoint)
  await workers.create(fake.client, pod, {attempt: 0, settings: options, hooks: {events() {}}})
  expect((await workers.sync(pod, await podSandboxes(fake.client, pod), options, deps())).failure).toBeUndefined()
  return pod
}

const killOptions = (options: SyncSettings) => ({
  requestedBy: 'a test',
  forget: true,
  podDirRoot: options.podDirRoot,
  podLogsRoot: options.logsRoot,
  events: (event: PodEvent) => events.push(event),
})

describe('pod workers', () => {
  it('a kill the runtime does not answer stays recorded, and the next sync of the pod finishes it instead of syncing', async () => {
    const workers = new PodWorkers()
    const options = settings()
    const pod = await running(workers, options)
    const sandboxes = await podSandboxes(fake.client, pod)
    fake.failNext('stopPodSandbox', grpc.status.DEADLINE_EXCEEDED, 'frozen')
    const kill = workers.terminate(fake.client, 'web_shop', sandboxes, killOptions(options))
    await expect(kill).rejects.toThrow(
      /its termination is recorded: a running supervisor, podctl sync or podctl kill web -n shop finishes it$/,
    )
    expect(readTermination(options.podDirRoot, pod.uid)).toMatchObject({requestedBy: 'a test'})
    expect(existsSync(desiredPodPath(options.podDirRoot, pod.uid))).toBe(true)

    fake.calls.length = 0
    const result = await workers.sync(pod, await podSandboxes(fake.client, pod), options, deps())
    expect(result).toMatchObject({terminated: true, did: [expect.stringMatching(/^terminated: a test asked for it at /)]})
    expect(fake.methods()).not.toContain('createContainer')
    expect(fake.methods()).toContain('removePodSandbox')
    expect(await podSandboxes(fake.client, pod)).toEqual([])
    expect(existsSync(terminationPath(options.podDirRoot, pod.uid))).toBe(false)
    expect(existsSync(desiredPodPath(options.podDirRoot, pod.uid))).toBe(false)
  })

  it('asks a runtime that does not answer again until the deadline, and says so each time', async () => {
    const workers = new PodWorkers()
    const options = settings()
    const pod = await running(workers, options)
    fake.failNext('stopPodSandbox', grpc.status.UNAVAILABLE, 'connection refused')
    fake.failNext('stopPodSandbox', grpc.status.UNAVAILABLE, 'connection refused')
    const started = Date.now()
    const result = await workers.terminate(fake.client, 'web_shop', await podSandboxes(fake.client, pod), {
      ...killOptions(options),
      retryUntil: Date.now() + 10_000,
    })
    expect(result.removed).toBe(true)
    expect(Date.now() - started).toBeGreaterThanOrEqual(3000)
    expect(events.filter((event) => event.reason === 'FailedKillPod').map((event) => event.message)).toEqual([
      expect.stringMatching(/unavailable .*; trying again in 1s$/),
      expect.stringMatching(/unavailable .*; trying again in 2s$/),
    ])
    expect(existsSync(terminationPath(options.podDirRoot, pod.uid))).toBe(false)
  })

  it('does one piece of work at a time for a pod: a kill asked during a sync waits for it, and nothing revives the pod after', async () => {
    const workers = new PodWorkers()
    const options = settings()
    const pod = await running(workers, options)
    // The pod's container exits; the next sync restarts it, held in flight at StartContainer.
    const app = [...fake.containers.values()].find((container) => container.metadata.name === 'app')!
    app.state = 'CONTAINER_EXITED'
    app.finishedAt = String(BigInt(Date.now()) * 1_000_000n)
    const held = fake.holdNext('startContainer')
    const sync = workers.sync(pod, await podSandboxes(fake.client, pod), options, deps())
    await held.arrived
    const kill = workers.terminate(fake.client, 'web_shop', await podSandboxes(fake.client, pod), killOptions(options))
    // The termination is recorded at once, though the kill waits for the sync in flight.
    await expect.poll(() => readTermination(options.podDirRoot, pod.uid)).toBeDefined()
    const order: string[] = []
    void sync.then(() => order.push('sync'))
    void kill.then(() => order.push('kill'))
    held.release()
    await Promise.all([sync, kill])
    expect(order).toEqual(['sync', 'kill'])
    const again = await workers.sync(pod, await podSandboxes(fake.client, pod), options, deps())
    expect(again.did).toEqual([])
    expect(await podSandboxes(fake.client, pod)).toEqual([])
  })

  it('kills a pod another tool made without recording anything of it, and says nothing of a record when that fails', async () => {
    const workers = new PodWorkers()
    const options = settings()
    const sandbox = fake.addSandbox({name: 'foreign', namespace: 'shop', uid: 'uid-foreign', attempt: 0})
    const sandboxes = (await podSandboxes(fake.client, {name: 'foreign', namespace: 'shop', uid: 'uid-foreign'} as PodModel)).filter(
      (candidate) => candidate.id === sandbox.id,
    )
    fake.failNext('stopPodSandbox', grpc.status.DEADLINE_EXCEEDED, 'frozen')
    const failed = await workers.terminate(fake.client, 'foreign_shop', sandboxes, killOptions(options)).catch((error: Error) => error)
    expect((failed as Error).message).not.toContain('recorded')
    expect(existsSync(join(options.podDirRoot, 'uid-foreign'))).toBe(false)
    expect((await workers.terminate(fake.client, 'foreign_shop', sandboxes, killOptions(options))).removed).toBe(true)
  })
})
