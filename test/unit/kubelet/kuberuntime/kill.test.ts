import {afterEach, beforeEach, describe, expect, it, vi} from 'vitest'

import type {CriClient} from '../../../../src/lib/cri/client.js'
import {NotFoundError, RuntimeError} from '../../../../src/lib/errors.js'
import type {PodEvent} from '../../../../src/lib/kube/events.js'
import {DEFAULT_GRACE_PERIOD_SECONDS, gracePeriodFor, parsePreStopHandler} from '../../../../src/lib/kube/labels.js'
import {graceNotice, killPod, KillPodError, stopTimeoutSeconds} from '../../../../src/lib/kubelet/kuberuntime/kill.js'
import type {Container, PodSandbox} from '../../../../src/generated/runtime/v1/api.js'

describe('gracePeriodFor', () => {
  it('prefers the override, then the pod annotation, then 30', () => {
    const annotations = {'io.kubernetes.pod.terminationGracePeriod': '7'}
    expect(gracePeriodFor(annotations, 3)).toBe(3)
    expect(gracePeriodFor(annotations, 0)).toBe(0)
    expect(gracePeriodFor(annotations)).toBe(7)
    expect(gracePeriodFor({})).toBe(DEFAULT_GRACE_PERIOD_SECONDS)
    expect(DEFAULT_GRACE_PERIOD_SECONDS).toBe(30)
  })

  it('ignores an annotation that is not a whole number of seconds', () => {
    for (const bad of ['', '-5', 'ten', '1.5', '5s']) {
      expect(gracePeriodFor({'io.kubernetes.pod.terminationGracePeriod': bad})).toBe(30)
    }

    expect(gracePeriodFor({'io.kubernetes.pod.terminationGracePeriod': ' 12 '})).toBe(12)
  })

  it('bounds a huge grace period (annotation or override) to what a timer can wait', () => {
    expect(gracePeriodFor({'io.kubernetes.pod.terminationGracePeriod': '999999999999'})).toBe(2_147_483)
    expect(gracePeriodFor({'io.kubernetes.pod.terminationGracePeriod': '9'.repeat(40)})).toBe(2_147_483)
    expect(gracePeriodFor({}, 999_999_999_999)).toBe(2_147_483)
  })
})

describe('stopTimeoutSeconds', () => {
  it('subtracts the whole seconds the preStop hook took', () => {
    expect(stopTimeoutSeconds(30, 0)).toBe(30)
    expect(stopTimeoutSeconds(30, 999)).toBe(30)
    expect(stopTimeoutSeconds(30, 1000)).toBe(29)
    expect(stopTimeoutSeconds(30, 5900)).toBe(25)
  })

  it('never goes below 2 s unless forced', () => {
    expect(stopTimeoutSeconds(5, 4500)).toBe(2)
    expect(stopTimeoutSeconds(1, 0)).toBe(2)
    expect(stopTimeoutSeconds(0, 0)).toBe(2)
    expect(stopTimeoutSeconds(10, 60_000)).toBe(2)
  })

  it('is 0 when forced, whatever the grace period', () => {
    expect(stopTimeoutSeconds(30, 0, true)).toBe(0)
    expect(stopTimeoutSeconds(0, 0, true)).toBe(0)
  })
})

describe('parsePreStopHandler', () => {
  it('reads an exec handler', () => {
    expect(parsePreStopHandler('{"exec":{"command":["sh","-c","sleep 2"]}}')).toEqual({type: 'exec', command: ['sh', '-c', 'sleep 2']})
  })

  it('is undefined when there is no hook', () => {
    expect(parsePreStopHandler(undefined)).toBeUndefined()
    expect(parsePreStopHandler('')).toBeUndefined()
    expect(parsePreStopHandler('null')).toBeUndefined()
    expect(parsePreStopHandler('{}')).toBeUndefined()
  })

  it('reads handlers that run from the node, and names unknown ones', () => {
    expect(parsePreStopHandler('{"httpGet":{"path":"/quit","port":8080}}')).toEqual({
      type: 'node',
      handler: {httpGet: {path: '/quit', port: 8080, host: undefined, scheme: 'HTTP', httpHeaders: []}},
    })
    expect(parsePreStopHandler('{"sleep":{"seconds":5}}')).toEqual({type: 'node', handler: {sleep: {seconds: 5}}})
    expect(parsePreStopHandler('{"tcpSocket":{"port":"web"}}')).toEqual({type: 'node', handler: {tcpSocket: {port: 'web'}}})
    expect(parsePreStopHandler('{"teleport":{}}')).toEqual({type: 'unsupported', handler: 'teleport'})
    expect(parsePreStopHandler('{"sleep":{"seconds":-1}}')).toMatchObject({type: 'invalid'})
  })

  it('reports broken annotations instead of throwing', () => {
    expect(parsePreStopHandler('{exec')).toMatchObject({type: 'invalid'})
    expect(parsePreStopHandler('[1]')).toMatchObject({type: 'invalid'})
    expect(parsePreStopHandler('{"exec":{"command":[]}}')).toMatchObject({type: 'invalid'})
    expect(parsePreStopHandler('{"exec":{"command":"echo hi"}}')).toMatchObject({type: 'invalid'})
  })
})

// A scripted runtime: records every call and answers from the handlers given.
interface Call {
  method: string
  request: Record<string, unknown>
  timeoutMs?: number
  at: number
}

function fakeClient(containers: Container[], handlers: Record<string, (request: Record<string, unknown>) => unknown> = {}) {
  const calls: Call[] = []
  const started = Date.now()
  const client = {
    deadlineFor: () => 120_000,
    async runtime(method: string, request: Record<string, unknown>, options: {timeoutMs?: number} = {}) {
      calls.push({method, request, timeoutMs: options.timeoutMs, at: Date.now() - started})
      if (method === 'listContainers') return {containers}
      const handler = handlers[method]
      return handler ? handler(request) : {}
    },
  }
  return {client: client as unknown as CriClient, calls}
}

function sandbox(id: string, createdAt: string, attempt = 0): PodSandbox {
  return {
    id,
    metadata: {name: 'web', namespace: 'default', uid: 'u1', attempt},
    state: 'SANDBOX_READY' as PodSandbox['state'],
    createdAt,
    labels: {},
    annotations: {},
    runtimeHandler: '',
  }
}

function container(id: string, podSandboxId: string, state: string, annotations: Record<string, string> = {}): Container {
  return {
    id,
    podSandboxId,
    metadata: {name: id, attempt: 0},
    image: undefined,
    imageRef: '',
    state: state as Container['state'],
    createdAt: '1',
    labels: {'io.kubernetes.container.name': `name-${id}`},
    annotations,
    imageId: '',
  }
}

describe('killPod', () => {
  const sandboxes = [sandbox('old', '100', 0), sandbox('new', '200', 1)]

  it('kills a pod whose grace period is huge without overflowing timers or the gRPC deadline', async () => {
    const hook = {
      'io.kubernetes.container.preStopHandler': '{"exec":{"command":["true"]}}',
      'io.kubernetes.pod.terminationGracePeriod': '999999999999',
    }
    const {client, calls} = fakeClient([container('c1', 'new', 'CONTAINER_RUNNING', hook)], {
      execSync: () => ({exitCode: 0, stdout: Buffer.from(''), stderr: Buffer.from('')}),
    })
    const result = await killPod(client, sandboxes)
    expect(result.removed).toBe(true)
    const exec = calls.find((call) => call.method === 'execSync')!
    const stop = calls.find((call) => call.method === 'stopContainer')!
    expect(exec.request.timeout).toBe('2147483')
    expect(stop.request.timeout).toBe('2147483')
    // grpc-js refuses deadlines more than 10^8 hours away ("Deadline is too far in the future").
    for (const call of [exec, stop]) expect(call.timeoutMs!).toBeLessThan(2 ** 31 - 1 + 200_000)
  })

  it('stops running containers, then every sandbox, then removes containers and sandboxes', async () => {
    const {client, calls} = fakeClient([
      container('c1', 'new', 'CONTAINER_RUNNING', {'io.kubernetes.pod.terminationGracePeriod': '9'}),
      container('c2', 'old', 'CONTAINER_EXITED'),
      container('other', 'someone-else', 'CONTAINER_RUNNING'),
    ])
    const events: PodEvent[] = []
    const result = await killPod(client, sandboxes, {events: (event) => events.push(event)})

    expect(result).toMatchObject({pod: 'web_default', sandboxIds: ['new', 'old'], containersStopped: 1, removed: true})
    expect(calls.map((call) => `${call.method} ${String(call.request.containerId ?? call.request.podSandboxId ?? '')}`.trim())).toEqual([
      'listContainers',
      'stopContainer c1',
      'stopPodSandbox new',
      'stopPodSandbox old',
      'removeContainer c1',
      'removeContainer c2',
      'removePodSandbox new',
      'removePodSandbox old',
    ])
    const stop = calls.find((call) => call.method === 'stopContainer')!
    expect(stop.request.timeout).toBe('9')
    // The RPC deadline outlives the grace period.
    expect(stop.timeoutMs).toBe(120_000 + 9000)
    expect(events).toEqual([expect.objectContaining({type: 'Normal', reason: 'Killing', message: 'Stopping container name-c1'})])
  })

  it('counts a container or sandbox another client is removing right now as killed (a concurrent kill)', async () => {
    const beingRemoved = (what: string) => () => {
      throw new RuntimeError(`failed to set removing state for ${what}: ${what} is already in removing state`)
    }

    const {client} = fakeClient([container('c1', 'new', 'CONTAINER_EXITED')], {
      removeContainer: beingRemoved('container "c1"'),
      removePodSandbox: beingRemoved('sandbox "new"'),
    })
    const result = await killPod(client, sandboxes)
    expect(result).toMatchObject({pod: 'web_default', removed: true})
  })

  it('still fails on other runtime errors while removing', async () => {
    const {client} = fakeClient([container('c1', 'new', 'CONTAINER_EXITED')], {
      removeContainer() {
        throw new RuntimeError('failed to remove rootfs: device or resource busy')
      },
    })
    await expect(killPod(client, sandboxes)).rejects.toBeInstanceOf(KillPodError)
  })

  it('keep: stops but removes nothing', async () => {
    const {client, calls} = fakeClient([container('c1', 'new', 'CONTAINER_RUNNING')])
    const result = await killPod(client, sandboxes, {keep: true, gracePeriodSeconds: 4})
    expect(result.removed).toBe(false)
    expect(calls.some((call) => call.method.startsWith('remove'))).toBe(false)
    expect(calls.find((call) => call.method === 'stopContainer')!.request.timeout).toBe('4')
  })

  it('says how long the pod may take, its longest grace period, before stopping; nothing with force', async () => {
    const running = [
      container('c1', 'new', 'CONTAINER_RUNNING', {'io.kubernetes.pod.terminationGracePeriod': '9'}),
      container('c2', 'new', 'CONTAINER_RUNNING'),
    ]
    const told: Array<{pod: string; seconds: number}> = []
    await killPod(fakeClient(running).client, sandboxes, {onGracePeriod: (grace) => told.push(grace)})
    await killPod(fakeClient(running).client, sandboxes, {gracePeriodSeconds: 0, onGracePeriod: (grace) => told.push(grace)})
    await killPod(fakeClient(running).client, sandboxes, {force: true, onGracePeriod: (grace) => told.push(grace)})
    await killPod(fakeClient([]).client, sandboxes, {onGracePeriod: (grace) => told.push(grace)})
    // The default 30 s of c2 is the longest; --grace-period 0 without force still gets the 2 s minimum.
    expect(told).toEqual([
      {pod: 'web_default', seconds: 30},
      {pod: 'web_default', seconds: 2},
    ])
    expect(graceNotice(told[0])).toBe('waiting up to 30s for web_default to stop (its grace period; --force kills at once)')
  })

  it('force: StopContainer timeout 0 and no preStop hook', async () => {
    const hook = {'io.kubernetes.container.preStopHandler': '{"exec":{"command":["sleep","1"]}}'}
    const {client, calls} = fakeClient([container('c1', 'new', 'CONTAINER_RUNNING', hook)])
    await killPod(client, sandboxes, {force: true})
    expect(calls.some((call) => call.method === 'execSync')).toBe(false)
    expect(calls.find((call) => call.method === 'stopContainer')!.request.timeout).toBe('0')
  })

  it('runs the exec preStop hook with the grace period as timeout, then stops', async () => {
    const hook = {
      'io.kubernetes.container.preStopHandler': '{"exec":{"command":["sh","-c","echo bye"]}}',
      'io.kubernetes.pod.terminationGracePeriod': '5',
    }
    const {client, calls} = fakeClient([container('c1', 'new', 'CONTAINER_RUNNING', hook)], {
      execSync: () => ({exitCode: 0, stdout: Buffer.from(''), stderr: Buffer.from('')}),
    })
    await killPod(client, sandboxes)
    const exec = calls.find((call) => call.method === 'execSync')!
    expect(exec.request).toEqual({containerId: 'c1', cmd: ['sh', '-c', 'echo bye'], timeout: '5'})
    expect(calls.findIndex((call) => call.method === 'execSync')).toBeLessThan(calls.findIndex((call) => call.method === 'stopContainer'))
  })

  it('waits at most the grace period for a hung preStop hook, warns, and stops with the 2 s minimum', async () => {
    const hook = {
      'io.kubernetes.container.preStopHandler': '{"exec":{"command":["sleep","100"]}}',
      'io.kubernetes.pod.terminationGracePeriod': '1',
    }
    const {client, calls} = fakeClient([container('c1', 'new', 'CONTAINER_RUNNING', hook)], {
      execSync: () => new Promise(() => {}),
    })
    const events: PodEvent[] = []
    const started = Date.now()
    await killPod(client, sandboxes, {events: (event) => events.push(event)})
    const took = Date.now() - started
    expect(took).toBeGreaterThanOrEqual(990)
    expect(took).toBeLessThan(3000)
    expect(calls.find((call) => call.method === 'stopContainer')!.request.timeout).toBe('2')
    expect(events.map((event) => `${event.type} ${event.reason}`)).toEqual(['Normal Killing', 'Warning FailedPreStopHook'])
  })

  it('warns on a failing or unsupported hook and still stops the container', async () => {
    const {client, calls} = fakeClient(
      [
        container('c1', 'new', 'CONTAINER_RUNNING', {'io.kubernetes.container.preStopHandler': '{"exec":{"command":["false"]}}'}),
        container('c2', 'new', 'CONTAINER_RUNNING', {'io.kubernetes.container.preStopHandler': '{"httpGet":{"port":80}}'}),
      ],
      {execSync: () => ({exitCode: 1, stdout: Buffer.from(''), stderr: Buffer.from('nope')})},
    )
    const events: PodEvent[] = []
    const result = await killPod(client, sandboxes, {events: (event) => events.push(event)})
    expect(result.containersStopped).toBe(2)
    const warnings = events.filter((event) => event.type === 'Warning')
    expect(warnings).toHaveLength(2)
    expect(warnings.every((event) => event.reason === 'FailedPreStopHook')).toBe(true)
    expect(warnings.map((event) => event.message).join('\n')).toMatch(/exited with 1.*nope/)
    expect(warnings.map((event) => event.message).join('\n')).toContain(
      'HTTP lifecycle hook (/) for Container "name-c2" in Pod "web_default" failed - error: failed to find networking container',
    )
    expect(calls.filter((call) => call.method === 'stopContainer')).toHaveLength(2)
  })

  it('counts NotFound as done at every step', async () => {
    const gone = () => {
      throw new NotFoundError('gone')
    }

    const {client} = fakeClient([container('c1', 'new', 'CONTAINER_RUNNING')], {
      stopContainer: gone,
      stopPodSandbox: gone,
      removeContainer: gone,
      removePodSandbox: gone,
    })
    await expect(killPod(client, sandboxes)).resolves.toMatchObject({removed: true})
  })

  it('still stops and removes the sandboxes when a container fails to stop, then reports the failure with the result', async () => {
    const {client, calls} = fakeClient([container('c1', 'new', 'CONTAINER_RUNNING'), container('c2', 'new', 'CONTAINER_RUNNING')], {
      stopContainer(request) {
        if (request.containerId === 'c1') throw new RuntimeError('StopContainer failed: boom')
        return {}
      },
    })
    const error = await killPod(client, sandboxes).catch((error_: unknown) => error_)
    expect(error).toBeInstanceOf(KillPodError)
    const failure = error as KillPodError
    expect(failure.exitCode).toBe(9)
    expect(failure.message).toContain('web_default')
    expect(failure.message).toContain('boom')
    expect(failure.result).toMatchObject({containersStopped: 1, removed: true})
    expect(calls.filter((call) => call.method === 'stopPodSandbox')).toHaveLength(2)
    expect(calls.filter((call) => call.method === 'removePodSandbox')).toHaveLength(2)
  })

  it('does not remove a sandbox that failed to stop', async () => {
    const {client, calls} = fakeClient([], {
      stopPodSandbox(request) {
        if (request.podSandboxId === 'old') throw new RuntimeError('cannot stop')
        return {}
      },
    })
    const failure = (await killPod(client, sandboxes).catch((error: unknown) => error)) as KillPodError
    expect(failure.result.removed).toBe(false)
    expect(calls.filter((call) => call.method === 'removePodSandbox').map((call) => call.request.podSandboxId)).toEqual(['new'])
  })

  it('uses a shared ListContainers result when given one', async () => {
    const {client, calls} = fakeClient([])
    const result = await killPod(client, sandboxes, {containers: [container('c9', 'old', 'CONTAINER_RUNNING')]})
    expect(result.containersStopped).toBe(1)
    expect(calls.some((call) => call.method === 'listContainers')).toBe(false)
    expect(calls.find((call) => call.method === 'stopContainer')!.request.containerId).toBe('c9')
  })
})

describe('killPod with sidecars: one grace period for the whole pod', () => {
  const sandboxes = [sandbox('new', '200', 1)]
  const grace = {'io.kubernetes.pod.terminationGracePeriod': '10'}
  const app = (id: string) => container(id, 'new', 'CONTAINER_RUNNING', grace)
  const sidecar = (id: string, index: number, more: Record<string, string> = {}) =>
    container(id, 'new', 'CONTAINER_RUNNING', {...grace, 'io.podctl.containerType': 'init', 'io.podctl.sidecar': String(index), ...more})

  /**
   * StopContainer as a runtime does it: it answers once the container has exited, after `exitsAfterMs`
   * of the stop signal (absent: SIGTERM ignored), or at its timeout (the SIGKILL), whichever is first.
   */
  const stopsLike = (exitsAfterMs: Record<string, number> = {}) => ({
    stopContainer: (request: Record<string, unknown>) =>
      new Promise((resolve) => {
        setTimeout(() => resolve({}), Math.min(Number(request.timeout) * 1000, exitsAfterMs[String(request.containerId)] ?? Infinity))
      }),
  })

  /** [container, StopContainer timeout, ms since the kill began] of every StopContainer, in order. */
  const stops = (calls: Call[]) =>
    calls.filter((call) => call.method === 'stopContainer').map((call) => [call.request.containerId, call.request.timeout, call.at])

  async function kill(client: CriClient, options: Parameters<typeof killPod>[2] = {}) {
    const killing = killPod(client, sandboxes, {keep: true, ...options})
    // Awaited below: a failed kill is not an unhandled rejection while the clock runs.
    killing.catch(() => {})
    await vi.advanceTimersByTimeAsync(60_000)
    return killing
  }

  beforeEach(() => {
    vi.useFakeTimers({toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance']})
  })

  afterEach(() => {
    vi.useRealTimers()
  })

  it('stops the app with the grace period, then the sidecar with what is left, at least 2 s: 12 s for 10 s, not 20', async () => {
    const {client, calls} = fakeClient([sidecar('proxy', 0), app('web')], stopsLike())
    const result = await kill(client)
    expect(stops(calls)).toEqual([
      ['web', '10', 0],
      ['proxy', '2', 10_000],
    ])
    expect(result).toMatchObject({containersStopped: 2, durationMs: 12_000})
  })

  it('lets the sidecar go as soon as the app has stopped, with the rest of the grace period', async () => {
    const {client, calls} = fakeClient([app('web'), sidecar('proxy', 0)], stopsLike({web: 3000, proxy: 500}))
    const result = await kill(client)
    expect(stops(calls)).toEqual([
      ['web', '10', 0],
      ['proxy', '7', 3000],
    ])
    expect(result.durationMs).toBe(3500)
  })

  it('stops sidecars in reverse declaration order, each after the ones declared after it', async () => {
    const containers = [sidecar('proxy', 0), sidecar('logger', 2), app('web'), app('worker')]
    const {client, calls} = fakeClient(containers, stopsLike({web: 1000, worker: 1500, logger: 1000, proxy: 1000}))
    const result = await kill(client)
    expect(stops(calls)).toEqual([
      ['web', '10', 0],
      ['worker', '10', 0],
      ['logger', '9', 1500],
      ['proxy', '8', 2500],
    ])
    expect(result.durationMs).toBe(3500)
  })

  it('runs every preStop hook at once, inside the grace period, and takes its time out of it', async () => {
    // The sidecar's hook takes 3 s; the app ignores SIGTERM: the sidecar waits the 7 s left, then gets 2 s.
    const hook = {'io.kubernetes.container.preStopHandler': '{"exec":{"command":["sh","-c","sleep 3"]}}'}
    const {client, calls} = fakeClient([app('web'), sidecar('proxy', 0, hook)], {
      ...stopsLike(),
      execSync: () =>
        new Promise((resolve) => {
          setTimeout(() => resolve({exitCode: 0, stdout: [], stderr: []}), 3000)
        }),
    })
    const result = await kill(client)
    expect(
      calls.filter((call) => call.method === 'execSync').map((call) => [call.request.containerId, call.request.timeout, call.at]),
    ).toEqual([['proxy', '10', 0]])
    expect(stops(calls)).toEqual([
      ['web', '10', 0],
      ['proxy', '2', 10_000],
    ])
    expect(result.durationMs).toBe(12_000)
  })

  it('--grace-period overrides it for every container alike; --force stops everything at once', async () => {
    const overridden = fakeClient([sidecar('proxy', 0), app('web')], stopsLike())
    expect((await kill(overridden.client, {gracePeriodSeconds: 4})).durationMs).toBe(6000)
    expect(stops(overridden.calls)).toEqual([
      ['web', '4', 0],
      ['proxy', '2', 4000],
    ])

    const forced = fakeClient([sidecar('proxy', 0), app('web')], stopsLike())
    expect((await kill(forced.client, {force: true})).durationMs).toBe(0)
    expect(stops(forced.calls)).toEqual([
      ['proxy', '0', 0],
      ['web', '0', 0],
    ])
  })

  it('does not hold the sidecar back when the app container fails to stop', async () => {
    const {client, calls} = fakeClient([app('web'), sidecar('proxy', 0)], {
      stopContainer(request) {
        if (request.containerId === 'web') throw new RuntimeError('StopContainer failed: boom')
        return {}
      },
    })
    const failure = await kill(client).catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(KillPodError)
    expect(stops(calls)).toEqual([
      ['web', '10', 0],
      ['proxy', '10', 0],
    ])
  })
})
