/**
 * GarbageCollector, the supervisor's collection loop, against the in-process fake runtime: a round
 * at start and one per period, images only every image period, events for what went and what
 * failed, and a failing round that never ends the loop.
 */
import {existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import * as grpc from '@grpc/grpc-js'
import {afterAll, beforeAll, beforeEach, describe, expect, it} from 'vitest'

import type {PodEvent} from '../../../../src/lib/kube/events.js'
import {GarbageCollector} from '../../../../src/lib/kubelet/gc/collector.js'
import {removeDeadContainer} from '../../../../src/lib/kubelet/gc/container-gc.js'
import {currentVantage, sessionLabels} from '../../../../src/lib/kube/session.js'
import {LIBRARY_SESSION_LABEL, sessionReaper} from '../../../../src/lib/kubelet/workers/gone-sessions.js'
import type {GcSettings} from '../../../../src/lib/kubelet/gc/collect.js'
import {PullRecords, pullRecordsDir} from '../../../../src/lib/images/pull-records.js'
import {type FakeContainer, FakePodRuntime} from '../../../support/fake-pod-runtime.js'
import {until} from '../../../support/until.js'

let fake: FakePodRuntime
const work = mkdtempSync(join(tmpdir(), 'podctl-gc-collector-'))
const settings: GcSettings = {
  images: {highThresholdPercent: 1, lowThresholdPercent: 0, minAgeMs: 0},
  logsRoot: join(work, 'logs'),
  podDirRoot: join(work, 'pods'),
  linksDir: join(work, 'links'),
}

beforeAll(async () => {
  fake = await new FakePodRuntime().start()
})

beforeEach(() => fake.reset())

afterAll(async () => {
  await fake.close()
  rmSync(work, {recursive: true, force: true})
})

/** An exited instance of `app`, as podctl makes it (its annotation) unless `foreign` (crictl's, with the kubelet's labels). */
function exited(attempt: number, foreign = false): FakeContainer {
  const sandbox = [...fake.sandboxes.values()][0] ?? fake.addSandbox({name: 'web', namespace: 'ns', uid: 'u', attempt: 0})
  const container: FakeContainer = {
    id: `c${attempt}${foreign ? 'f' : '0'}${'0'.repeat(62)}`,
    podSandboxId: sandbox.id,
    metadata: {name: 'app', attempt},
    image: {image: 'busybox:1.36'},
    imageRef: 'sha256:busybox',
    state: 'CONTAINER_EXITED',
    createdAt: String(attempt + 1),
    startedAt: '0',
    finishedAt: '0',
    exitCode: 1,
    reason: 'Error',
    labels: {
      'io.kubernetes.pod.name': 'web',
      'io.kubernetes.pod.namespace': 'ns',
      'io.kubernetes.pod.uid': 'u',
      'io.kubernetes.container.name': 'app',
    },
    annotations: foreign ? {} : {'io.podctl.containerType': 'app'},
    mounts: [],
  }
  fake.containers.set(container.id, container)
  return container
}

const count = (method: string) => fake.methods().filter((name) => name === method).length

/** Three rounds of a collector every 20 ms (images once), and the events they sent. */
async function threeRounds(): Promise<PodEvent[]> {
  const events: PodEvent[] = []
  const reapPod = sessionReaper(fake.client, {podDirRoot: settings.podDirRoot, podLogsRoot: settings.logsRoot, requestedBy: 'a test'})
  const collector = new GarbageCollector(fake.client, settings, {
    periodMs: 20,
    imagePeriodMs: 60_000,
    events: (e) => events.push(e),
    reapPod,
  })
  const controller = new AbortController()
  const loop = collector.start(controller.signal)
  // One ListContainers per round (the gone sessions' step and the sandboxes' each list sandboxes).
  await until('three rounds', () => count('listContainers') >= 3)
  controller.abort()
  await loop
  return events
}

describe('GarbageCollector', () => {
  it('collects at start and every period, images only every image period, until the signal ends it', async () => {
    exited(0)
    exited(1)
    const events = await threeRounds()
    expect(count('listImages')).toBe(1)
    expect([...fake.containers.values()].map((container) => container.metadata.attempt)).toEqual([1])
    expect(events.filter((event) => event.type === 'Normal').map((event) => [event.reason, event.message, event.object])).toEqual([
      ['GarbageCollected', 'removed 1 dead container', 'node'],
    ])
  })

  it('kills the library pods whose session is gone, and says so', async () => {
    const orphan = fake.addSandbox(
      {name: 'orphan', namespace: 'ci', uid: 'uid-orphan', attempt: 0},
      {
        'io.podctl.restartPolicy': 'Always',
        'io.podctl.podDirectory': join(settings.podDirRoot, 'uid-orphan'),
      },
    )
    // A test process of this boot and pid namespace that is gone: no live pid started 1 tick after boot.
    Object.assign(orphan.labels, sessionLabels({pid: 999_999, startTicks: 1, ...currentVantage()}), {[LIBRARY_SESSION_LABEL]: ''})
    const events: PodEvent[] = []
    const reapPod = sessionReaper(fake.client, {podDirRoot: settings.podDirRoot, podLogsRoot: settings.logsRoot, requestedBy: 'a test'})
    const collector = new GarbageCollector(fake.client, settings, {events: (e) => events.push(e), reapPod})
    const result = await collector.round()
    expect(result?.pods).toEqual([{pod: 'orphan_ci', session: 'pid 999999'}])
    expect(fake.sandboxes.size).toBe(0)
    expect(events.filter((event) => event.type === 'Normal').map((event) => [event.reason, event.message, event.object])).toEqual([
      ['GarbageCollected', 'removed 1 pod of a gone session', 'node'],
    ])
  })

  it("leaves another tool's exited containers alone round after round, and says nothing of them", async () => {
    exited(0, true)
    exited(1, true)
    const events = await threeRounds()
    expect(fake.containers.size).toBe(2)
    expect(count('removeContainer')).toBe(0)
    expect(events.filter((event) => event.reason !== 'ImageGCFailed')).toEqual([])
  })

  it('reports a failed round as a warning and keeps collecting', async () => {
    fake.failNext('listContainers', grpc.status.UNAVAILABLE, 'runtime restarting')
    const events: PodEvent[] = []
    const collector = new GarbageCollector(fake.client, settings, {periodMs: 20, events: (e) => events.push(e)})
    const controller = new AbortController()
    const loop = collector.start(controller.signal)
    await until('a round after the failure', () => count('listContainers') >= 2)
    controller.abort()
    await loop
    expect(events[0]).toMatchObject({type: 'Warning', reason: 'ContainerGCFailed', object: 'node'})
    expect(events[0].message).toMatch(/runtime restarting/)
  })

  it('says so when unused images cannot bring usage down to the low threshold', async () => {
    fake.images.set('sha256:old', {id: 'sha256:old', repoTags: ['old:1'], repoDigests: [], size: '10', pinned: false})
    // Pulled by podctl on this runtime, as its image manager records it; a second, crictl's, has no record.
    fake.images.set('sha256:theirs', {id: 'sha256:theirs', repoTags: ['theirs:1'], repoDigests: [], size: '10', pinned: false})
    const pulls = new PullRecords(pullRecordsDir(settings.podDirRoot, fake.client.runtimeEndpoint))
    await pulls.record({imageId: 'sha256:old', imageRef: 'sha256:old', image: 'old:1', pulledMs: Date.now()})
    const events: PodEvent[] = []
    const result = await new GarbageCollector(fake.client, settings, {events: (e) => events.push(e)}).round()
    expect(result?.images.removed).toEqual([{id: 'sha256:old', ref: 'old:1', sizeBytes: 10}])
    expect(events.map((event) => [event.type, event.reason])).toEqual([
      ['Normal', 'GarbageCollected'],
      ['Warning', 'ImageGCFailed'],
    ])
    expect(events[0].message).toBe('removed 1 image (0.0 MB)')
    expect([...fake.images.keys()]).toEqual(['sha256:theirs'])
  })

  it('does nothing with a period of 0', async () => {
    await new GarbageCollector(fake.client, settings, {periodMs: 0}).start(new AbortController().signal)
    expect(fake.methods()).toEqual([])
  })
})

describe('removeDeadContainer', () => {
  it('removes the log first, as the kubelet does: a log that cannot go keeps its container for the next round', async () => {
    const container = exited(1)
    // A directory where the log file should be: removing it as a file fails, as a permission problem would.
    const stuck = join(work, 'stuck', '1.log')
    mkdirSync(join(stuck, 'in-the-way'), {recursive: true})
    await expect(removeDeadContainer(fake.client, container as never, stuck)).rejects.toThrow()
    expect(fake.containers.has(container.id)).toBe(true)
    expect(count('removeContainer')).toBe(0)

    const log = join(work, 'fine', '1.log')
    mkdirSync(join(work, 'fine'), {recursive: true})
    writeFileSync(log, 'last words\n')
    await removeDeadContainer(fake.client, container as never, log)
    expect(existsSync(log)).toBe(false)
    expect(fake.containers.has(container.id)).toBe(false)
  })

  it('counts a container another removal already has in hand as removed (SyncPod pruning the same dead instance)', async () => {
    const container = exited(2)
    const message = `failed to set removing state for container "${container.id}": container is already in removing state`
    fake.failNext('removeContainer', grpc.status.UNKNOWN, message)
    await expect(removeDeadContainer(fake.client, container as never, undefined)).resolves.toMatchObject({id: container.id})
    fake.failNext('removeContainer', grpc.status.UNKNOWN, 'disk on fire')
    await expect(removeDeadContainer(fake.client, container as never, undefined)).rejects.toThrow(/disk on fire/)
  })
})
