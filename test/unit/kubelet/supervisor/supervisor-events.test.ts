/**
 * The supervisor (sync --watch, run --supervise) with and without the runtime's container event
 * stream, against the in-process fake runtime: an event wakes the loop long before its listing
 * period, UNIMPLEMENTED (containerd 1.6) means polling, said once, and a stream that breaks means
 * polling until it is subscribed again.
 */
import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {status as GrpcStatus} from '@grpc/grpc-js'
import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'

import type {EnsureImageOptions, EnsureImageResult} from '../../../../src/lib/images/image-manager.js'
import type {PodEvent} from '../../../../src/lib/kube/events.js'
import {parseDocuments} from '../../../../src/lib/manifest/load.js'
import {parsePod} from '../../../../src/lib/manifest/pod.js'
import {recordDesiredPod} from '../../../../src/lib/kubelet/config/desired-state.js'
import {podSandboxes} from '../../../../src/lib/kubelet/kuberuntime/sandbox.js'
import {type SuperviseDeps, superviseSelection} from '../../../../src/lib/kubelet/supervisor/supervisor.js'
import {runPod} from '../../../../src/lib/kubelet/run/run-pod.js'
import {FakePodRuntime} from '../../../support/fake-pod-runtime.js'
import {until} from '../../../support/until.js'

const POD = `
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: shop}
spec:
  containers:
  - {name: app, image: "busybox:1.36", command: [sleep, "3600"]}
`

let fake: FakePodRuntime
let running: {controller: AbortController; done: Promise<void>} | undefined

beforeAll(async () => {
  fake = await new FakePodRuntime().start()
})

afterEach(async () => {
  running?.controller.abort()
  await running?.done
  running = undefined
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

/** Runs the pod on the fake, then supervises it in the background; returns the events it prints. */
async function supervise(options: Partial<SuperviseDeps>): Promise<PodEvent[]> {
  const root = mkdtempSync(join(tmpdir(), 'podctl-supervise-events-'))
  const settings = {
    logsRoot: join(root, 'logs'),
    podDirRoot: join(root, 'pods'),
    hostResolvConf: 'nameserver 10.0.0.2\n',
    nodeMemoryBytes: 1024 ** 3,
  }
  const [document] = await parseDocuments(POD, 'pod.yaml')
  const pod = parsePod(document, 'pod.yaml', {newUid: () => 'uid-web'})
  const signal = new AbortController().signal
  const outcome = await runPod(
    pod,
    [],
    {...settings, wait: 'running', replace: false, keepOnFailure: false, remove: false, pollMs: 20},
    {
      client: fake.client,
      images,
      events() {},
      signal,
    },
  )
  expect(outcome.failure).toBeUndefined()
  // What `podctl run` records beside runPod: the supervisor syncs only pods it finds recorded.
  await recordDesiredPod(settings.podDirRoot, pod)
  fake.calls.length = 0
  const events: PodEvent[] = []
  const controller = new AbortController()
  selects = 0
  const select = async () => {
    selects++
    return [{fullName: 'web_shop', sandboxes: await podSandboxes(fake.client, pod)}]
  }

  const done = superviseSelection(select, settings, {
    client: fake.client,
    images,
    events: (event) => events.push(event),
    signal: controller.signal,
    ...options,
  })
  running = {controller, done}
  return events
}

const modes = (events: PodEvent[]) => events.filter((e) => e.reason === 'ContainerEvents' || e.reason === 'Polling').map((e) => e.reason)
const count = (method: string) => fake.methods().filter((m) => m === method).length
/** The supervisor's listings: each pass starts with one `select`. */
let selects = 0
const listings = () => selects

function appContainer() {
  const container = [...fake.containers.values()].find((c) => c.metadata.name === 'app' && c.state === 'CONTAINER_RUNNING')
  if (!container) throw new Error('no running app container')
  return container
}

/** The container exits, as the runtime would see it, and the event the runtime would send. */
function exitContainer() {
  const container = appContainer()
  container.state = 'CONTAINER_EXITED'
  container.exitCode = 1
  container.reason = 'Error'
  container.finishedAt = String(BigInt(Date.now()) * 1_000_000n)
  const sandbox = fake.sandboxes.get(container.podSandboxId)!
  return {
    containerId: container.id,
    containerEventType: 'CONTAINER_STOPPED_EVENT',
    podSandboxStatus: {id: sandbox.id, metadata: sandbox.metadata, state: sandbox.state},
  }
}

describe('supervisor: container events where the runtime has them', () => {
  it('wakes on an event of its pod and restarts the exited container long before its listing period', async () => {
    fake.containerEvents = 'stream'
    // Listing only once a minute: only the event can make the loop look again within the test.
    const events = await supervise({pollMs: 60_000, relistMs: 60_000, eventStreamTiming: {settleMs: 50}})
    await until('the stream mode', () => modes(events).includes('ContainerEvents'))
    await until('the first pass', () => listings() >= 1)
    const listed = listings()
    // Another pod's event does not wake it.
    const other = {id: 'sb-other', metadata: {name: 'db', namespace: 'other', uid: 'u2', attempt: 0}, state: 'SANDBOX_READY'}
    expect(fake.pushEvent({containerId: 'c-other', containerEventType: 'CONTAINER_STOPPED_EVENT', podSandboxStatus: other})).toBe(1)
    // Not a race: a wrong wake-up could only make this pass by listing late, never fail it.
    await new Promise((resolve) => {
      setTimeout(resolve, 300)
    })
    expect(listings()).toBe(listed)
    const creates = count('createContainer')
    expect(fake.pushEvent(exitContainer())).toBe(1)
    // A generous bound, still far below the minute's listing and the 10s resync. Waits for the
    // Started event, not the fake's record of the call: the call is recorded before it returns.
    await until('the restart', () => events.some((e) => e.reason === 'Started'), {timeoutMs: 5000})
    expect(count('createContainer')).toBeGreaterThan(creates)
    expect(listings()).toBeGreaterThan(listed)
    expect(appContainer().metadata.attempt).toBe(1)
    expect(events.filter((e) => e.reason === 'Started').map((e) => e.object)).toEqual(['web_shop/app'])
    expect(modes(events)).toEqual(['ContainerEvents'])
    expect(events.find((e) => e.reason === 'ContainerEvents')?.message).toBe(
      "Woken by the runtime's container events; listing it every 1m as a safety net",
    )
    expect(count('getContainerEvents')).toBe(1)
  })

  it('polls every period when the runtime answers UNIMPLEMENTED (containerd 1.6), and says so once', async () => {
    const events = await supervise({pollMs: 50})
    await until('a few listings', () => listings() >= 6)
    expect(modes(events)).toEqual(['Polling'])
    expect(events.find((e) => e.reason === 'Polling')).toMatchObject({
      type: 'Normal',
      object: 'supervisor',
      message:
        'The runtime has no container event stream (GetContainerEvents is unimplemented; containerd 1.7+ and CRI-O have one): ' +
        'listing it every 50ms',
    })
    expect(count('getContainerEvents')).toBe(1)
    // Polling alone still sees an exit and restarts the container.
    const creates = count('createContainer')
    exitContainer()
    await until('the restart', () => count('createContainer') > creates)
  })

  it('falls back to polling when the stream breaks, then subscribes again', async () => {
    fake.containerEvents = 'stream'
    const events = await supervise({pollMs: 100, relistMs: 60_000, eventStreamTiming: {settleMs: 50, retryMs: 200}})
    await until('the stream mode', () => modes(events).includes('ContainerEvents'))
    await until('the first pass', () => listings() >= 1)
    const listed = listings()
    fake.breakEventStreams(GrpcStatus.INTERNAL, 'transport is closing')
    await until('polling', () => modes(events).length >= 2)
    expect(events.find((e) => e.reason === 'Polling')?.message).toMatch(
      /^The container event stream broke \(.*transport is closing.*\): listing it every 100ms, subscribing again in 200ms$/,
    )
    // Listed again at once (an event may have been lost) and every 100ms meanwhile.
    await until('a listing after the break', () => listings() > listed)
    await until('the new stream', () => modes(events).length >= 3)
    expect(modes(events)).toEqual(['ContainerEvents', 'Polling', 'ContainerEvents'])
    expect(count('getContainerEvents')).toBe(2)
    expect(fake.openEventStreams()).toBe(1)
    // The new stream wakes the loop as the first did.
    const creates = count('createContainer')
    fake.pushEvent(exitContainer())
    await until('the restart', () => count('createContainer') > creates, {timeoutMs: 5000})
  })

  it('gives up after its retries, polls quietly, and tries the stream again once the runtime is back', async () => {
    fake.containerEvents = 'stream'
    const events = await supervise({pollMs: 100, relistMs: 60_000, eventStreamTiming: {settleMs: 50, retryMs: 50, maxRetries: 1}})
    await until('the stream mode', () => modes(events).includes('ContainerEvents'))
    fake.breakEventStreams(GrpcStatus.UNAVAILABLE, 'connection reset')
    await until('polling', () => modes(events).length >= 2)
    expect(events.find((e) => e.reason === 'Polling')?.message).toMatch(/listing it every 100ms, until the runtime restarts$/)
    const listed = listings()
    await until('more listings', () => listings() >= listed + 3)
    expect(count('getContainerEvents')).toBe(1)
    // The runtime goes away for a listing and comes back: the stream is tried again.
    fake.failNext('listPodSandbox', GrpcStatus.UNAVAILABLE, 'connection refused')
    await until('the runtime back', () => events.some((e) => e.reason === 'RuntimeReady'))
    await until('the new stream', () => modes(events).length >= 3)
    expect(modes(events)).toEqual(['ContainerEvents', 'Polling', 'ContainerEvents'])
    expect(count('getContainerEvents')).toBe(2)
  })

  it('beside a silent stream the safety-net listing still runs, at its own period rather than the poll', async () => {
    fake.containerEvents = 'stream'
    const events = await supervise({pollMs: 20, relistMs: 250, eventStreamTiming: {settleMs: 50}})
    await until('the stream mode', () => modes(events).includes('ContainerEvents'))
    const listed = listings()
    const started = Date.now()
    await until('three safety-net listings', () => listings() >= listed + 3)
    // Polling every 20ms would have listed ~37 times by now; the bound only fails if the poll ran.
    expect(listings() - listed).toBeLessThan(Math.max(4, ((Date.now() - started) / 250) * 2 + 2))
    // An exit with no event is still found by the safety net.
    const creates = count('createContainer')
    exitContainer()
    await until('the restart', () => count('createContainer') > creates)
  })

  it('closes its stream when supervision ends', async () => {
    fake.containerEvents = 'stream'
    const events = await supervise({pollMs: 100, eventStreamTiming: {settleMs: 50}})
    await until('the stream mode', () => modes(events).includes('ContainerEvents'))
    expect(fake.openEventStreams()).toBe(1)
    running!.controller.abort()
    await running!.done
    await until('the stream closed', () => fake.openEventStreams() === 0)
  })
})

describe('supervisor: runtimes that split their events or send none', () => {
  it('leaves the events of a runtime that gives each to one subscriber (CRI-O 1.26) to other listeners, and polls', async () => {
    fake.containerEvents = 'stream'
    fake.version = {runtimeName: 'cri-o', runtimeVersion: '1.26.4'}
    const events = await supervise({pollMs: 50, eventStreamTiming: {settleMs: 50}})
    await until('a few listings', () => listings() >= 4)
    expect(modes(events)).toEqual(['Polling'])
    expect(events.find((e) => e.reason === 'Polling')?.message).toBe(
      'cri-o 1.26.4 gives each container event to one subscriber only (CRI-O 1.28 gives each to all): ' +
        'listing it every 50ms, leaving its events to other listeners',
    )
    expect(count('getContainerEvents')).toBe(0)
    const creates = count('createContainer')
    exitContainer()
    await until('the restart', () => count('createContainer') > creates)
  })

  it('takes the events of a runtime that broadcasts them (containerd 2.x, CRI-O 1.28+)', async () => {
    fake.containerEvents = 'stream'
    fake.version = {runtimeName: 'containerd', runtimeVersion: 'v2.1.4'}
    const events = await supervise({pollMs: 60_000, relistMs: 60_000, eventStreamTiming: {settleMs: 50}})
    await until('the stream mode', () => modes(events).includes('ContainerEvents'))
    expect(count('getContainerEvents')).toBe(1)
  })

  it('polls, once and without retries, when the runtime ends the stream at once (CRI-O without enable_pod_events)', async () => {
    fake.containerEvents = 'ended'
    const events = await supervise({pollMs: 50, eventStreamTiming: {settleMs: 200, retryMs: 10}})
    await until('a few listings', () => listings() >= 6)
    expect(modes(events)).toEqual(['Polling'])
    expect(events.find((e) => e.reason === 'Polling')?.message).toBe(
      'The runtime ended its container event stream at once ' +
        '(CRI-O sends container events only with enable_pod_events = true in its [crio.runtime] table): listing it every 50ms',
    )
    expect(count('getContainerEvents')).toBe(1)
  })
})
