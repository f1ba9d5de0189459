import {existsSync, mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {status as GrpcStatus} from '@grpc/grpc-js'
import {afterAll, afterEach, beforeAll, describe, expect, it, vi} from 'vitest'

import {AlreadyExistsError, ExitCode, InterruptedError} from '../../../../src/lib/errors.js'
import {BackOff} from '../../../../src/lib/kube/backoff.js'
import type {EnsureImageOptions, EnsureImageResult} from '../../../../src/lib/images/image-manager.js'
import type {PodEvent} from '../../../../src/lib/kube/events.js'
import {parseDocuments} from '../../../../src/lib/manifest/load.js'
import type {PodModel} from '../../../../src/lib/manifest/model.js'
import {parsePod} from '../../../../src/lib/manifest/pod.js'
import {PodFailedError} from '../../../../src/lib/kubelet/core/reasons.js'
import {syncPod} from '../../../../src/lib/kubelet/kuberuntime/sync-pod.js'
import {type PodRunDeps, type PodRunSettings, runPod} from '../../../../src/lib/kubelet/run/run-pod.js'
import {FakePodRuntime} from '../../../support/fake-pod-runtime.js'

const POD = `
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: shop}
spec:
  volumes:
  - {name: cache, emptyDir: {}}
  initContainers:
  - {name: setup, image: "busybox:1.36", command: ["true"]}
  containers:
  - name: app
    image: "nginx:1.27"
    lifecycle: {postStart: {exec: {command: [sh, -c, "echo hi"]}}}
    volumeMounts: [{name: cache, mountPath: /cache}]
`

let fake: FakePodRuntime
let ensured: string[]
let events: PodEvent[]

beforeAll(async () => {
  fake = await new FakePodRuntime().start()
})

afterEach(() => fake.reset())

afterAll(async () => {
  await fake.close()
})

async function pod(uid = 'new-uid'): Promise<PodModel> {
  const [document] = await parseDocuments(POD, 'pod.yaml')
  return parsePod(document, 'pod.yaml', {newUid: () => uid})
}

function settings(overrides: Partial<PodRunSettings> = {}): PodRunSettings {
  const root = mkdtempSync(join(tmpdir(), 'podctl-sync-pod-'))
  return {
    wait: 'running',
    replace: false,
    keepOnFailure: false,
    remove: false,
    logsRoot: join(root, 'logs'),
    podDirRoot: join(root, 'pods'),
    hostResolvConf: 'nameserver 10.0.0.2\n',
    nodeMemoryBytes: 1024 ** 3,
    pollMs: 20,
    ...overrides,
  }
}

/** An image manager that finds every image present, recording what it was asked for among the RPCs. */
function deps(signal = new AbortController().signal): PodRunDeps {
  ensured = []
  events = []
  return {
    client: fake.client,
    images: {
      async ensureImage(options: EnsureImageOptions): Promise<EnsureImageResult> {
        fake.calls.push({method: `ensureImage ${options.image}`, request: options})
        ensured.push(options.image)
        return {image: options.image, imageRef: `sha256:${options.image}`, pulled: false, message: '', policy: 'IfNotPresent', attempts: 0}
      },
    },
    events: (event) => events.push(event),
    signal,
  }
}

const reasons = () => events.map((event) => `${event.type} ${event.reason} ${event.object ?? ''}`.trim())

describe('runPod (SyncPod against the in-process fake runtime)', () => {
  it('rolls the pod back when the runtime fails while the result of a start that went through is read', async () => {
    // A run as a supervisor makes it (wait none) counts the PodSandboxStatus calls: the result reads the last.
    expect((await runPod(await pod(), [], settings({wait: 'none'}), deps())).failure).toBeUndefined()
    const statusCalls = fake.methods().filter((method) => method === 'podSandboxStatus').length
    fake.reset()
    fake.failAfter('podSandboxStatus', statusCalls - 1, GrpcStatus.UNAVAILABLE, 'the runtime went away')
    const outcome = await runPod(await pod(), [], settings({wait: 'none'}), deps())
    expect(reasons()).toContain('Normal Started web_shop/app')
    expect(outcome.failure?.message).toMatch(/the runtime went away/)
    expect(outcome.result.rolledBack).toBe(true)
    expect(fake.methods()).toContain('removePodSandbox')
    expect(fake.sandboxes.size).toBe(0)
  })

  it('sends the RPCs in the kubelet order: sandbox, images ahead, then SyncPod (observe, init, observe, app, postStart)', async () => {
    const outcome = await runPod(await pod(), [], settings(), deps())
    expect(outcome.failure).toBeUndefined()
    const sync = fake.methods().slice(0, fake.methods().indexOf('execSync') + 2)
    expect(sync).toEqual([
      // The runtime's cgroup driver (cri/cgroup-driver.ts) for the pod's cgroup parent, remembered a while per runtime.
      'status',
      'runPodSandbox',
      'podSandboxStatus',
      'ensureImage busybox:1.36',
      'ensureImage nginx:1.27',
      // The pass observes the pod (computePodActions reads it), starts the init container and waits for it.
      'listPodSandbox',
      'listContainers',
      'podSandboxStatus',
      'imageStatus',
      'createContainer',
      'startContainer',
      'containerStatus',
      // It observes again: the app container is next.
      'listContainers',
      'podSandboxStatus',
      'containerStatus',
      'imageStatus',
      'createContainer',
      'startContainer',
      'execSync',
      'listPodSandbox',
    ])
    expect(outcome.result).toMatchObject({
      pod: 'web',
      namespace: 'shop',
      uid: 'new-uid',
      attempt: 0,
      ip: '10.88.0.9',
      phase: 'Running',
      rolledBack: false,
      containers: [
        {name: 'setup', type: 'init', state: 'Exited', exitCode: 0, attempt: 0},
        {name: 'app', type: 'app', state: 'Running', exitCode: null, attempt: 0},
      ],
    })
    expect(reasons()).toEqual([
      'Normal Created web_shop/setup',
      'Normal Started web_shop/setup',
      'Normal Created web_shop/app',
      'Normal Started web_shop/app',
    ])
  })

  it('rolls the pod back when CreateContainer fails, with the kubelet reason and exit code 14', async () => {
    fake.failNext('createContainer', GrpcStatus.INTERNAL, 'no space left on device')
    const outcome = await runPod(await pod(), [], settings(), deps())
    expect(outcome.failure).toBeInstanceOf(PodFailedError)
    expect(outcome.failure).toMatchObject({code: 'CreateContainerError', exitCode: ExitCode.POD_FAILED, container: 'setup'})
    expect(outcome.failure!.message).toMatch(/no space left on device \(rolled back\)$/)
    const failedAt = fake.methods().indexOf('createContainer')
    expect(fake.methods().slice(failedAt + 1)).toEqual(['listPodSandbox', 'listContainers', 'stopPodSandbox', 'removePodSandbox'])
    expect(fake.sandboxes.size).toBe(0)
    expect(outcome.result).toMatchObject({rolledBack: true, phase: 'Failed', error: {code: 'CreateContainerError', exitCode: 14}})
    expect(reasons()).toContain('Warning Failed web_shop/setup')
  })

  it('rolls back what it made when interrupted mid-run, and reports the interrupt', async () => {
    const controller = new AbortController()
    const run = deps(controller.signal)
    const seen = run.events
    // Interrupted once the app container has started: the wait for completion is under way.
    run.events = (event) => {
      seen(event)
      if (event.reason === 'Started' && event.object === 'web_shop/app') controller.abort()
    }

    const outcome = await runPod(await pod(), [], settings({wait: 'completed'}), run)
    expect(outcome.failure).toBeInstanceOf(InterruptedError)
    expect(outcome.failure!.exitCode).toBe(ExitCode.INTERRUPTED)
    expect(outcome.result.rolledBack).toBe(true)
    expect(fake.methods()).toContain('stopContainer')
    expect(fake.sandboxes.size).toBe(0)
    expect(fake.containers.size).toBe(0)
    expect(reasons()).toContain('Normal Killing web_shop/app')
  })

  it('--replace kills the existing pod and starts attempt + 1 with its uid, leaving the input model untouched', async () => {
    const old = fake.addSandbox({name: 'web', namespace: 'shop', uid: 'old-uid', attempt: 2})
    const input = await pod('new-uid')
    const before = structuredClone(input)
    const options = settings({replace: true})
    const outcome = await runPod(input, [old as never], options, deps())
    expect(outcome.failure).toBeUndefined()
    expect(input).toEqual(before)
    expect(fake.methods().slice(0, 3)).toEqual(['listContainers', 'stopPodSandbox', 'removePodSandbox'])
    const created = fake.calls.find((call) => call.method === 'runPodSandbox')!.request
    expect(created.config.metadata).toMatchObject({name: 'web', namespace: 'shop', uid: 'old-uid', attempt: 3})
    expect(outcome.result).toMatchObject({uid: 'old-uid', attempt: 3})
    // The emptyDir is mounted from the directory set up for the reused uid.
    const app = fake.calls.filter((call) => call.method === 'createContainer')[1].request
    expect(app.config.mounts[0].hostPath).toBe(join(options.podDirRoot, 'old-uid/volumes/kubernetes.io~empty-dir/cache'))
    expect(reasons()[0]).toBe('Normal SandboxChanged web_shop')
  })

  it('a recreation (SyncPod) keeps the pod directory and its emptyDir data; the old sandbox goes once the new one runs', async () => {
    const options = settings({wait: 'none'})
    const first = await runPod(await pod('kept-uid'), [], options, deps())
    expect(first.failure).toBeUndefined()
    const data = join(options.podDirRoot, 'kept-uid/volumes/kubernetes.io~empty-dir/cache/data.txt')
    writeFileSync(data, 'still here\n')
    const old = [...fake.sandboxes.values()]
    fake.calls.length = 0
    const outcome = await syncPod(await pod('generated'), old as never, options, {...deps(), recreate: true})
    expect(outcome.failure).toBeUndefined()
    expect(outcome).toMatchObject({uid: 'kept-uid'})
    expect(outcome.did[0]).toBe('recreated the pod sandbox (attempt 1)')
    expect(readFileSync(data, 'utf8')).toBe('still here\n')
    // Stopped first, removed only after the new sandbox and its containers were made.
    const methods = fake.methods()
    expect(methods.indexOf('stopPodSandbox')).toBeLessThan(methods.indexOf('runPodSandbox'))
    expect(methods.indexOf('removePodSandbox')).toBeGreaterThan(methods.lastIndexOf('startContainer'))
    expect([...fake.sandboxes.values()].map((sandbox) => sandbox.metadata.attempt)).toEqual([1])
  })

  it('a pod whose sandbox the runtime lost after it was listed is missing (attempt + 1), not changed', async () => {
    const options = settings({wait: 'none'})
    expect((await runPod(await pod('lost-uid'), [], options, deps())).failure).toBeUndefined()
    const listed = [...fake.sandboxes.values()]
    // Lost between the listing and the pass (a reboot, crictl rmp): the runtime knows neither the sandbox nor its containers.
    fake.sandboxes.clear()
    fake.containers.clear()
    const outcome = await syncPod(await pod('lost-uid'), listed as never, options, deps())
    expect(outcome.failure).toBeUndefined()
    expect(reasons()).toContain('Normal SandboxMissing web_shop')
    expect(reasons()).not.toContain('Normal SandboxChanged web_shop')
    expect([...fake.sandboxes.values()].map((sandbox) => sandbox.metadata.attempt)).toEqual([1])
  })

  it('a failed recreation removes only what it made: the stopped sandbox and the emptyDir data stay', async () => {
    const options = settings({wait: 'none'})
    await runPod(await pod('kept-uid'), [], options, deps())
    const data = join(options.podDirRoot, 'kept-uid/volumes/kubernetes.io~empty-dir/cache/data.txt')
    writeFileSync(data, 'still here\n')
    const old = [...fake.sandboxes.values()]
    fake.failNext('createContainer', GrpcStatus.INTERNAL, 'no space left on device')
    const outcome = await syncPod(await pod('generated'), old as never, options, {...deps(), recreate: true})
    expect(outcome.failure!.message).toMatch(/\(rolled back\); the pod keeps its volumes and its stopped sandbox \(attempt 0\)$/)
    expect(readFileSync(data, 'utf8')).toBe('still here\n')
    expect(existsSync(join(options.podDirRoot, 'kept-uid'))).toBe(true)
    expect([...fake.sandboxes.values()].map((sandbox) => [sandbox.metadata.attempt, sandbox.state])).toEqual([[0, 'SANDBOX_NOTREADY']])
  })

  it('restarts a failing init container after the crash back-off, then gives up with CrashLoopBackOff', async () => {
    fake.initExitCode = 1
    const manifest = await pod()
    const options = settings({restartBackOff: new BackOff({initialMs: 100, maxMs: 3000}), deadline: Date.now() + 1500})
    const outcome = await runPod({...manifest, restartPolicy: 'OnFailure'}, [], options, deps())
    expect(outcome.failure).toMatchObject({code: 'CrashLoopBackOff', exitCode: ExitCode.POD_FAILED, container: 'setup'})
    // The first restart is immediate; the second waits out a window, announced by a BackOff event.
    expect(reasons().filter((reason) => reason === 'Normal Started web_shop/setup').length).toBeGreaterThanOrEqual(3)
    expect(reasons()).toContain('Warning BackOff web_shop/setup')
    // Only the newest exited instance is kept before each restart.
    expect(fake.methods()).toContain('removeContainer')
    expect(fake.sandboxes.size).toBe(0)
  })

  it('supervised: an app container that crashes at start is handed over running its back-off, not rolled back', async () => {
    fake.appExitCode = 3
    const options = settings({supervised: true, settleMs: 1000, deadline: Date.now() + 5000})
    const outcome = await runPod(await pod('handed'), [], options, deps())
    expect(outcome.failure).toBeUndefined()
    expect(outcome.result).toMatchObject({
      rolledBack: false,
      containers: expect.arrayContaining([expect.objectContaining({name: 'app', state: 'Exited', exitCode: 3})]),
    })
    expect(fake.sandboxes.size).toBe(1)
    // Recorded for the supervisor that takes it over.
    expect(existsSync(join(options.podDirRoot, 'handed', 'pod.json'))).toBe(true)
    expect(fake.methods()).not.toContain('stopPodSandbox')
  })

  it('unsupervised, the same crash fails the run and rolls it back', async () => {
    fake.appExitCode = 3
    const options = settings({restartBackOff: new BackOff({initialMs: 100, maxMs: 3000}), settleMs: 1000, deadline: Date.now() + 1500})
    const outcome = await runPod(await pod(), [], options, deps())
    expect(outcome.failure).toMatchObject({code: 'CrashLoopBackOff', container: 'app'})
    expect(outcome.result.rolledBack).toBe(true)
    expect(fake.sandboxes.size).toBe(0)
  })

  it("supervised, an app container that fails under restartPolicy Never is still the run's failure (none restarts it)", async () => {
    fake.appExitCode = 3
    const manifest = await pod()
    const outcome = await runPod(
      {...manifest, restartPolicy: 'Never'},
      [],
      settings({supervised: true, deadline: Date.now() + 5000}),
      deps(),
    )
    expect(outcome.failure).toMatchObject({code: 'Error', container: 'app'})
    expect(outcome.failure!.message).toMatch(/^container "app" exited with code 3 \(Error\) and restartPolicy is Never \(rolled back/)
    expect(fake.sandboxes.size).toBe(0)
  })

  it('--wait none returns with an app container that already exited under restartPolicy Never: its status, not a failure', async () => {
    // A command that ends at once (debug node's) can exit before the check on a loaded node: the result must not depend on that race.
    fake.appExitCode = 4
    const manifest = await pod()
    const outcome = await runPod({...manifest, restartPolicy: 'Never'}, [], settings({wait: 'none'}), deps())
    expect(outcome.failure).toBeUndefined()
    expect(outcome.result.rolledBack).toBe(false)
    expect(fake.sandboxes.size).toBe(1)
  })

  it('--wait none still fails an init container that fails under restartPolicy Never (Init:Error), and rolls back', async () => {
    fake.initExitCode = 1
    const manifest = await pod()
    const outcome = await runPod({...manifest, restartPolicy: 'Never'}, [], settings({wait: 'none'}), deps())
    expect(outcome.failure).toMatchObject({code: 'Init:Error', exitCode: ExitCode.POD_FAILED, container: 'setup'})
    expect(outcome.failure!.message).toMatch(
      /^init container "setup" exited with code 1 \(Error\) and restartPolicy is Never \(rolled back/,
    )
    expect(fake.sandboxes.size).toBe(0)
  })

  it('records pod.json before the first container starts (a supervisor sees the pod at once), and the rollback removes it', async () => {
    const options = settings()
    const path = join(options.podDirRoot, 'recorded', 'pod.json')
    const run = deps()
    const seen = run.events
    const recordedAtStart: boolean[] = []
    run.events = (event) => {
      seen(event)
      if (event.reason === 'Started') recordedAtStart.push(existsSync(path))
    }

    fake.failNext('execSync', GrpcStatus.INTERNAL, 'hook broke')
    const outcome = await runPod(await pod('recorded'), [], options, run)
    expect(outcome.failure).toMatchObject({code: 'PostStartHookError'})
    expect(recordedAtStart).toEqual([true, true])
    expect(existsSync(path)).toBe(false)
  })

  it('--keep-on-failure: a failed postStart kills its container, the pod stays (not recorded for sync)', async () => {
    fake.execSyncAnswer = () => ({stdout: Buffer.alloc(0), stderr: Buffer.from('hook broke'), exitCode: 1})
    const options = settings({keepOnFailure: true})
    const outcome = await runPod(await pod('kept'), [], options, deps())
    expect(outcome.failure).toMatchObject({code: 'PostStartHookError', container: 'app'})
    expect(outcome.result.rolledBack).toBe(false)
    expect(reasons()).toContain('Normal Killing web_shop/app')
    expect(fake.sandboxes.size).toBe(1)
    expect(existsSync(join(options.podDirRoot, 'kept', 'pod.json'))).toBe(false)
  })

  it('refuses an existing pod without --replace and touches nothing', async () => {
    const old = fake.addSandbox({name: 'web', namespace: 'shop', uid: 'old-uid', attempt: 0})
    const outcome = await runPod(await pod(), [old as never], settings(), deps())
    expect(outcome.failure).toBeInstanceOf(AlreadyExistsError)
    expect(outcome.result.rolledBack).toBe(false)
    expect(fake.methods()).toEqual([])
    expect(fake.sandboxes.size).toBe(1)
  })

  // Every CRI call a run makes, interrupted while in flight: the runtime finishes its part anyway
  // (as containerd does), and nothing may be left behind.
  const IN_FLIGHT = ['runPodSandbox', 'podSandboxStatus', 'imageStatus', 'createContainer', 'startContainer', 'containerStatus', 'execSync']
  for (const method of IN_FLIGHT) {
    it(`leaves nothing behind when interrupted during ${method} (3 of 3)`, async () => {
      for (let round = 0; round < 3; round++) {
        fake.reset()
        // containerd keeps a container whose start was cancelled "starting" for a while.
        fake.cancelledStartBusyMs = 400
        const hold = fake.holdNext(method)
        const controller = new AbortController()
        const running = runPod(await pod(`uid-${method}-${round}`), [], settings(), deps(controller.signal))
        await hold.arrived
        controller.abort()
        setTimeout(hold.release, 100)
        const outcome = await running
        expect(outcome.failure).toBeInstanceOf(InterruptedError)
        expect([...fake.sandboxes.keys()], `sandboxes left after ${method}`).toEqual([])
        expect([...fake.containers.keys()], `containers left after ${method}`).toEqual([])
        expect(outcome.result.rolledBack).toBe(true)
      }
    })
  }

  it('does not cancel StartContainer mid-call', async () => {
    const hold = fake.holdNext('startContainer')
    const controller = new AbortController()
    const running = runPod(await pod(), [], settings(), deps(controller.signal))
    await hold.arrived
    controller.abort()
    setTimeout(hold.release, 50)
    await running
    const start = fake.calls.find((call) => call.method === 'startContainer')!
    expect(start.cancelled).toBe(false)
    expect(fake.sandboxes.size).toBe(0)
  })

  it('retries the rollback until the runtime lets go of a starting container, and says so', async () => {
    // A runtime of its own: calls the interrupted runs above leave in flight must not take its queued failures.
    const shared = fake
    fake = await new FakePodRuntime().start()
    try {
      fake.failNext('removeContainer', GrpcStatus.UNKNOWN, 'container is in starting state, try again')
      fake.failNext('execSync', GrpcStatus.INTERNAL, 'hook broke')
      const outcome = await runPod(await pod(), [], settings(), deps())
      expect(outcome.failure).toBeInstanceOf(PodFailedError)
      // The fake runtime writes no log: the pod's log directory held nothing but podctl's mark, and went.
      expect(outcome.failure!.message).toMatch(/\(rolled back after 2 attempts in \d+\.\d s\)$/)
      expect(fake.sandboxes.size).toBe(0)
      expect(fake.containers.size).toBe(0)
    } finally {
      await fake.close()
      fake = shared
    }
  })

  it('says exactly what is left when the rollback cannot finish', async () => {
    const {ROLLBACK_BUDGET_MS} = await import('../../../../src/lib/kubelet/run/run-pod.js')
    expect(ROLLBACK_BUDGET_MS).toBeGreaterThan(0)
    // Every StopPodSandbox fails: the sandbox can never be removed.
    for (let i = 0; i < 500; i++) fake.failNext('stopPodSandbox', GrpcStatus.INTERNAL, 'network teardown failed')
    vi.spyOn(Date, 'now').mockImplementation(
      (
        (start) => () =>
          start + (fake.calls.length > 20 ? ROLLBACK_BUDGET_MS * 2 : 0)
      )(Date.now()),
    )
    try {
      fake.failNext('createContainer', GrpcStatus.INTERNAL, 'no space left on device')
      const outcome = await runPod(await pod(), [], settings(), deps())
      const sandbox = [...fake.sandboxes.keys()][0]
      expect(outcome.result.rolledBack).toBe(false)
      expect(outcome.failure!.message).toContain(
        `left behind pod web_shop (sandbox ${sandbox.slice(0, 13)}); its termination is recorded, so a supervisor or ` +
          'podctl sync of it finishes it once the runtime answers, or remove it with: podctl kill web -n shop',
      )
      expect(outcome.failure!.message).toContain('rolling back failed for')
    } finally {
      vi.restoreAllMocks()
    }
  })
})
