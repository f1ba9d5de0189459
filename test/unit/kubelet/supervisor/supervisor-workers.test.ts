/**
 * The supervisor's pod workers against the in-process fake runtime: one pod's hung StopContainer
 * (a kill waiting out its grace period) does not delay another pod's restart; a container failing
 * liveness is restarted through the crash back-off with growing gaps; a pod `run` records after the
 * supervisor started is supervised.
 */
import {mkdtempSync} from 'node:fs'
import {rm} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'

import type {EnsureImageOptions, EnsureImageResult} from '../../../../src/lib/images/image-manager.js'
import type {PodEvent} from '../../../../src/lib/kube/events.js'
import type {PodModel} from '../../../../src/lib/manifest/model.js'
import {parseDocuments} from '../../../../src/lib/manifest/load.js'
import {parsePod} from '../../../../src/lib/manifest/pod.js'
import {desiredPodPath, recordDesiredPod} from '../../../../src/lib/kubelet/config/desired-state.js'
import {lockPods} from '../../../../src/lib/kubelet/config/pod-lock.js'
import {SupervisorLocks} from '../../../../src/lib/kubelet/config/supervisor-lock.js'
import {podSandboxes} from '../../../../src/lib/kubelet/kuberuntime/sandbox.js'
import type {ProbeKindName, ProbeResultName} from '../../../../src/lib/kubelet/status/status-manager.js'
import {superviseSelection} from '../../../../src/lib/kubelet/supervisor/supervisor.js'
import {runPod} from '../../../../src/lib/kubelet/run/run-pod.js'
import {FakePodRuntime} from '../../../support/fake-pod-runtime.js'
import {until} from '../../../support/until.js'

const manifest = (name: string) => `
apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: shop}
spec:
  terminationGracePeriodSeconds: 30
  containers:
  - {name: app, image: "busybox:1.36", command: [sleep, "3600"]}
`

const images = {
  async ensureImage(options: EnsureImageOptions): Promise<EnsureImageResult> {
    return {image: options.image, imageRef: `sha256:${options.image}`, pulled: false, message: '', policy: 'IfNotPresent', attempts: 0}
  },
}

type Listener = (containerId: string, kind: ProbeKindName, result: ProbeResultName) => void

/** A prober whose liveness results the test sets: failing(id) fails it, as a probe worker would report. */
class StubProber {
  readonly added: string[] = []
  /** Every container added fails its liveness probe right away. */
  failEverything = false
  private readonly failing = new Set<string>()
  private readonly listeners = new Set<Listener>()

  addContainer(target: {containerId: string}): void {
    this.added.push(target.containerId)
    if (this.failEverything) setTimeout(() => this.fail(target.containerId), 0)
  }

  removeContainer(): void {}

  result(containerId: string, kind: ProbeKindName): ProbeResultName {
    return kind === 'liveness' && this.failing.has(containerId) ? 'failure' : 'success'
  }

  onResult(listener: Listener): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  fail(containerId: string): void {
    this.failing.add(containerId)
    for (const listener of this.listeners) listener(containerId, 'liveness', 'failure')
  }
}

let fake: FakePodRuntime
let running: {controller: AbortController; done: Promise<void>} | undefined
const releases: Array<() => void> = []
const backOffBase = process.env.PODCTL_BACKOFF_BASE_MS

beforeAll(async () => {
  fake = await new FakePodRuntime().start()
})

afterEach(async () => {
  for (const release of releases.splice(0)) release()
  running?.controller.abort()
  await running?.done
  running = undefined
  fake.reset()
  if (backOffBase === undefined) delete process.env.PODCTL_BACKOFF_BASE_MS
  else process.env.PODCTL_BACKOFF_BASE_MS = backOffBase
})

afterAll(async () => {
  await fake.close()
})

function nodeSettings() {
  const root = mkdtempSync(join(tmpdir(), 'podctl-supervise-workers-'))
  return {
    logsRoot: join(root, 'logs'),
    podDirRoot: join(root, 'pods'),
    hostResolvConf: 'nameserver 10.0.0.2\n',
    nodeMemoryBytes: 1024 ** 3,
  }
}

/** Runs the pods on the fake (`runPod` records them as `podctl run` does; `record = false` takes the record away again). */
async function runPods(settings: ReturnType<typeof nodeSettings>, names: string[], record = true): Promise<PodModel[]> {
  const pods: PodModel[] = []
  for (const name of names) {
    const [document] = await parseDocuments(manifest(name), 'pod.yaml')
    const pod = parsePod(document, 'pod.yaml', {newUid: () => `uid-${name}`})
    const outcome = await runPod(
      pod,
      [],
      {...settings, wait: 'running', replace: false, keepOnFailure: false, remove: false, pollMs: 20},
      {client: fake.client, images, events() {}, signal: new AbortController().signal},
    )
    expect(outcome.failure).toBeUndefined()
    if (!record) await rm(desiredPodPath(settings.podDirRoot, pod.uid), {force: true})
    pods.push(pod)
  }

  return pods
}

/** When the supervisor printed each event. */
const eventTimes = new WeakMap<PodEvent, number>()

/** Supervises the pods in the background, listing every 50 ms; returns the events it prints. */
function supervise(settings: ReturnType<typeof nodeSettings>, pods: PodModel[], prober: StubProber): PodEvent[] {
  const events: PodEvent[] = []
  const controller = new AbortController()
  const select = async () =>
    Promise.all(pods.map(async (pod) => ({fullName: `${pod.name}_${pod.namespace}`, sandboxes: await podSandboxes(fake.client, pod)})))
  const done = superviseSelection(select, settings, {
    client: fake.client,
    images,
    events(event) {
      eventTimes.set(event, Date.now())
      events.push(event)
    },
    signal: controller.signal,
    prober,
    pollMs: 50,
  })
  running = {controller, done}
  return events
}

function runningApp(pod: string) {
  const sandboxes = new Set([...fake.sandboxes.values()].filter((s) => s.metadata.name === pod).map((s) => s.id))
  return [...fake.containers.values()].find((c) => sandboxes.has(c.podSandboxId) && c.state === 'CONTAINER_RUNNING')
}

function exit(pod: string): void {
  const container = runningApp(pod)!
  container.state = 'CONTAINER_EXITED'
  container.exitCode = 1
  container.reason = 'Error'
  container.finishedAt = String(BigInt(Date.now()) * 1_000_000n)
}

/** The sandbox of the pod's newest app container, running or not. */
function runningAppSandbox(pod: string): string {
  const sandbox = [...fake.sandboxes.values()].find((s) => s.metadata.name === pod)
  return sandbox!.id
}

const started = (events: PodEvent[], object: string) => events.filter((e) => e.reason === 'Started' && e.object === object)

describe('supervisor: a worker per pod', () => {
  it("one pod's hung StopContainer does not delay another pod's restart", async () => {
    const settings = nodeSettings()
    const pods = await runPods(settings, ['slow', 'fast'])
    const prober = new StubProber()
    const events = supervise(settings, pods, prober)
    const slow = runningApp('slow')!
    await until('both pods registered with the prober', () => prober.added.length >= 2)
    // The slow pod's liveness fails; its StopContainer hangs (a container ignoring SIGTERM for 30 s).
    const stop = fake.holdNext('stopContainer')
    releases.push(stop.release)
    prober.fail(slow.id)
    await stop.arrived
    await until('the Killing event', () => events.some((e) => e.reason === 'Killing' && e.object === 'slow_shop/app'))
    // Meanwhile the other pod's container exits: it is restarted while the kill still hangs.
    exit('fast')
    await until('the fast pod restarted', () => started(events, 'fast_shop/app').length > 0, {timeoutMs: 5000})
    expect(runningApp('fast')?.metadata.attempt).toBe(1)
    expect(started(events, 'slow_shop/app')).toEqual([])
    // The kill ends: the slow pod is restarted in its turn.
    stop.release()
    await until('the slow pod restarted', () => started(events, 'slow_shop/app').length > 0, {timeoutMs: 5000})
    expect(runningApp('slow')?.metadata.attempt).toBe(1)
  })

  it('restarts a container failing liveness through the crash back-off as the kubelet does: twice at once, then growing gaps', async () => {
    process.env.PODCTL_BACKOFF_BASE_MS = '1000'
    const settings = nodeSettings()
    const pods = await runPods(settings, ['flaky'])
    const prober = new StubProber()
    prober.failEverything = true
    const events = supervise(settings, pods, prober)
    await until('five restarts', () => started(events, 'flaky_shop/app').length >= 5, {timeoutMs: 15_000})
    // Each kill, with what followed it until the next kill: a restart at once, or a BackOff and a later restart.
    const own = events.filter((e) => e.object === 'flaky_shop/app' && ['BackOff', 'Killing', 'Started'].includes(e.reason))
    const cycles = own
      .map((e, index) => ({e, index}))
      .filter(({e}) => e.reason === 'Killing')
      .map(({e, index}) => {
        const after = own.slice(index + 1)
        const next = after.findIndex((other) => other.reason === 'Killing')
        const until = next === -1 ? after : after.slice(0, next)
        const start = until.find((other) => other.reason === 'Started')
        return {backedOff: until.some((other) => other.reason === 'BackOff'), gap: start && eventTimes.get(start)! - eventTimes.get(e)!}
      })
    // As the kubelet: the back-off is checked against the instance that exited a cycle before the kill,
    // so the first two kills restart at once (the second opens the ladder); each later one waits its
    // window from the kill, 1 s then 2 s (each instance lives far less than a window: the probe fails at
    // once), less a little for timer slack.
    expect(cycles.slice(0, 4).map((cycle) => cycle.backedOff)).toEqual([false, false, true, true])
    const [third, fourth] = cycles.slice(2, 4)
    expect(third.gap).toBeGreaterThanOrEqual(980)
    expect(fourth.gap).toBeGreaterThanOrEqual(1980)
    expect(events.filter((e) => e.reason === 'BackOff').length).toBeGreaterThan(0)
  })

  it('leaves a pod that waits out its back-off alone until the back-off ends, instead of a pass per listing', async () => {
    process.env.PODCTL_BACKOFF_BASE_MS = '2000'
    const settings = nodeSettings()
    const pods = await runPods(settings, ['waiter'])
    const prober = new StubProber()
    const events = supervise(settings, pods, prober)
    await until('the pod registered with the prober', () => prober.added.length > 0)
    exit('waiter')
    await until('the first restart, at once', () => started(events, 'waiter_shop/app').length === 1, {timeoutMs: 5000})
    exit('waiter')
    await until('the BackOff event', () => events.some((e) => e.reason === 'BackOff'), {timeoutMs: 5000})
    const backOffAt = Date.now()
    const sandboxId = runningAppSandbox('waiter')
    const passes = () => fake.calls.filter((call) => call.method === 'podSandboxStatus' && call.request.podSandboxId === sandboxId).length
    const before = passes()
    await new Promise((resolve) => {
      setTimeout(resolve, 1000)
    })
    // A pass observes the sandbox (PodSandboxStatus); the listing runs every 50 ms, 20 times in that second.
    expect(passes() - before).toBeLessThanOrEqual(1)
    await until('the second restart, after the back-off', () => started(events, 'waiter_shop/app').length === 2, {timeoutMs: 5000})
    expect(Date.now() - backOffAt).toBeGreaterThanOrEqual(1000)
    expect(events.filter((e) => e.reason === 'BackOff')).toHaveLength(1)
  })

  it('supervises a pod recorded after it started: quiet while `run` holds its lock, then supervised once recorded', async () => {
    const settings = nodeSettings()
    const [pod] = await runPods(settings, ['late'], false)
    // `run` is still at work on the pod: it holds the pod's pass lock and has not recorded it yet.
    const runLock = await lockPods(settings.podDirRoot, ['late_shop'])
    const prober = new StubProber()
    const events = supervise(settings, [pod], prober)
    await new Promise((resolve) => {
      setTimeout(resolve, 300)
    })
    expect(events.filter((e) => e.object === 'late_shop').map((e) => e.reason)).toEqual([])
    await recordDesiredPod(settings.podDirRoot, pod)
    await runLock.release()
    await until('the pod registered with the prober', () => prober.added.length > 0)
    exit('late')
    await until('the restart', () => started(events, 'late_shop/app').length > 0, {timeoutMs: 5000})
    expect(events.filter((e) => e.reason === 'NotManaged')).toEqual([])
  })

  it('says NotManaged once for a pod nothing records, and supervises it if it is recorded later', async () => {
    const settings = nodeSettings()
    const [pod] = await runPods(settings, ['stray'], false)
    const prober = new StubProber()
    const events = supervise(settings, [pod], prober)
    await until('NotManaged', () => events.some((e) => e.reason === 'NotManaged'))
    await new Promise((resolve) => {
      setTimeout(resolve, 200)
    })
    expect(events.filter((e) => e.reason === 'NotManaged')).toHaveLength(1)
    await recordDesiredPod(settings.podDirRoot, pod)
    await until('Supervising the pod', () => events.some((e) => e.reason === 'Supervising' && e.object === 'stray_shop'))
    await until('the pod registered with the prober', () => prober.added.length > 0)
  })
})

describe('supervisor: pods another supervisor holds', () => {
  it('says once, naming the holder’s pid, that it leaves them all to it; then waits as a standby', async () => {
    const settings = nodeSettings()
    const pods = await runPods(settings, ['one', 'two', 'three'])
    // Another supervisor (as a second `sync --watch -f DIR` on the same directory finds the first).
    const other = new SupervisorLocks(settings.podDirRoot, 'podctl sync --watch')
    for (const pod of pods) expect((await other.take(pod.uid)).held).toBe(true)
    try {
      const events = supervise(settings, pods, new StubProber())
      await until('the Standby event', () => events.some((event) => event.reason === 'Standby'))
      const warnings = events.filter((event) => event.reason === 'AlreadySupervised')
      expect(warnings).toHaveLength(1)
      expect(warnings[0].message).toMatch(
        new RegExp(
          `^Pod is supervised by pid ${process.pid} \\(podctl sync --watch\\) since \\S+; podctl leaves it, and every other pod ` +
            'that process supervises, to that process and takes over when it stops$',
        ),
      )
      expect(events.filter((event) => ['Created', 'Killing', 'Started'].includes(event.reason))).toEqual([])
    } finally {
      await other.release()
    }
  })
})
