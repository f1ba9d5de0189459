import {describe, expect, it} from 'vitest'

import {
  containerStatusOf,
  type ContainerStatusView,
  describeContainerState,
  podConditionsOf,
  type StatusInput,
  type StatusSpec,
} from '../../../../src/lib/kubelet/status/container-status.js'
import type {ContainerReport} from '../../../../src/lib/kubelet/status/pod-status.js'

const SANDBOX = 'sandbox-new'
const T0 = Date.parse('2026-12-01T10:00:00.000Z')
const iso = (ms: number) => new Date(T0 + ms).toISOString()
const KEY = 'web_shop_uid-1_app_0abc'

/** One instance, newest first in the inputs below; times in ms after T0. */
function instance(
  name: string,
  attempt: number,
  state: ContainerReport['state'],
  {type = 'app', exitCode = 1, started = 0, finished = 1000, reason = '', sandbox = SANDBOX} = {} as Partial<{
    type: 'init' | 'app'
    exitCode: number
    started: number
    finished: number
    reason: string
    sandbox: string
  }>,
): ContainerReport {
  const exited = state === 'Exited'
  return {
    name,
    id: `${name}-${attempt}`,
    podSandboxId: sandbox,
    state,
    type,
    image: 'busybox',
    imageRef: 'sha256:b',
    attempt,
    createdAt: iso(started),
    startedAt: state === 'Created' ? null : iso(started),
    finishedAt: exited ? iso(finished) : null,
    exitCode: exited ? exitCode : null,
    reason: exited ? reason || (exitCode === 0 ? 'Completed' : 'Error') : '',
    message: '',
  }
}

const appSpec: StatusSpec = {name: 'app', type: 'app', backOffKey: KEY}

function input(overrides: Partial<StatusInput>): StatusInput {
  return {
    pod: {name: 'web', namespace: 'shop', uid: 'uid-1'},
    restartPolicy: 'Always',
    specs: [appSpec],
    instances: [],
    newestSandbox: {id: SANDBOX, ready: true},
    // The window of 20 s was opened when attempt 0 finished (at 1 s); attempt 1 finished at 5 s.
    backOff: {entries: {[KEY]: {backoffMs: 20_000, lastUpdate: T0 + 1000}}, ladder: {initialMs: 10_000, maxMs: 300_000}},
    now: T0 + 9000,
    ...overrides,
  }
}

const crashed = [instance('app', 1, 'Exited', {exitCode: 3, started: 4000, finished: 5000}), instance('app', 0, 'Exited')]

describe('containerStatusOf (convertToAPIContainerStatuses from the runtime and backoff.json)', () => {
  const cases: Array<[string, StatusSpec, Partial<StatusInput>, Partial<ContainerStatusView>]> = [
    [
      'an exited container inside its back-off window waits: CrashLoopBackOff, its last state the attempt that just exited',
      appSpec,
      {instances: crashed},
      {
        state: 'Waiting',
        ready: false,
        started: false,
        restartCount: 1,
        waiting: {
          reason: 'CrashLoopBackOff',
          message: 'back-off 20s restarting failed container=app pod=web_shop(uid-1)',
          backOffUntil: iso(25_000),
          backOffRemainingMs: 16_000,
        },
        terminated: null,
        lastState: {
          containerId: 'app-1',
          exitCode: 3,
          reason: 'Error',
          message: '',
          startedAt: iso(4000),
          finishedAt: iso(5000),
        },
      },
    ],
    [
      'once the window has passed it is terminated, its last state the attempt before',
      appSpec,
      {instances: crashed, now: T0 + 26_000},
      {
        state: 'Exited',
        waiting: null,
        terminated: expect.objectContaining({containerId: 'app-1', exitCode: 3}),
        lastState: expect.objectContaining({containerId: 'app-0'}),
      },
    ],
    [
      'restartPolicy Never restarts nothing: no back-off, whatever backoff.json holds',
      appSpec,
      {instances: crashed, restartPolicy: 'Never'},
      {state: 'Exited', waiting: null, terminated: expect.objectContaining({containerId: 'app-1'})},
    ],
    [
      'OnFailure does not restart an exit 0',
      appSpec,
      {instances: [instance('app', 1, 'Exited', {exitCode: 0, started: 4000, finished: 5000})], restartPolicy: 'OnFailure'},
      {state: 'Exited', waiting: null, terminated: expect.objectContaining({reason: 'Completed', exitCode: 0})},
    ],
    [
      'a stopped sandbox restarts nothing: no back-off',
      appSpec,
      {instances: crashed, newestSandbox: {id: SANDBOX, ready: false}},
      {state: 'Exited', waiting: null},
    ],
    [
      'an entry older than twice the cap is forgotten (the kubelet starts over): no back-off',
      appSpec,
      {
        instances: crashed,
        backOff: {entries: {[KEY]: {backoffMs: 20_000, lastUpdate: T0 - 700_000}}, ladder: {initialMs: 10_000, maxMs: 300_000}},
      },
      {state: 'Exited', waiting: null},
    ],
    [
      'without a recorded pod (no back-off key) nothing is known of a back-off',
      {name: 'app', type: 'app'},
      {instances: crashed},
      {state: 'Exited', waiting: null},
    ],
    [
      'running: its last state is the newest exited instance before it, not an older one',
      appSpec,
      {
        instances: [
          instance('app', 2, 'Running', {started: 30_000}),
          instance('app', 1, 'Exited', {exitCode: 3, started: 4000, finished: 5000}),
          instance('app', 0, 'Exited'),
        ],
      },
      {
        state: 'Running',
        ready: true,
        started: true,
        restartCount: 2,
        waiting: null,
        terminated: null,
        lastState: expect.objectContaining({containerId: 'app-1', exitCode: 3, finishedAt: iso(5000)}),
      },
    ],
    [
      'a finished init container is terminated, Completed, exit 0, and ready',
      {name: 'setup', type: 'init', backOffKey: 'k-setup'},
      {
        instances: [instance('setup', 0, 'Exited', {type: 'init', exitCode: 0, reason: ''})],
        backOff: {entries: {'k-setup': {backoffMs: 20_000, lastUpdate: T0}}, ladder: {initialMs: 10_000, maxMs: 300_000}},
      },
      {
        state: 'Exited',
        ready: true,
        started: false,
        waiting: null,
        terminated: expect.objectContaining({reason: 'Completed', exitCode: 0}),
        lastState: null,
      },
    ],
    [
      'a failed init container is restarted (Always) and so waits out its back-off',
      {name: 'setup', type: 'init', backOffKey: KEY},
      {instances: [instance('setup', 1, 'Exited', {type: 'init', exitCode: 1, started: 4000, finished: 5000})]},
      {state: 'Waiting', ready: false, waiting: expect.objectContaining({reason: 'CrashLoopBackOff'})},
    ],
    [
      'never created in a pod with init containers: waiting, PodInitializing',
      appSpec,
      {instances: [], specs: [{name: 'setup', type: 'init'}, appSpec]},
      {state: 'Waiting', waiting: {reason: 'PodInitializing', message: ''}},
    ],
    [
      'never created: waiting, ContainerCreating',
      appSpec,
      {instances: []},
      {state: 'Waiting', ready: false, waiting: {reason: 'ContainerCreating', message: ''}, lastState: null},
    ],
    [
      'created, not started: waiting, ContainerCreating',
      appSpec,
      {instances: [instance('app', 0, 'Created')]},
      {state: 'Created', waiting: {reason: 'ContainerCreating', message: ''}},
    ],
  ]

  it.each(cases)('%s', (_name, spec, overrides, expected) => {
    expect(containerStatusOf(spec, input(overrides))).toMatchObject(expected)
  })

  const running = [instance('app', 0, 'Running')]
  const readiness: Array<[string, StatusSpec, Partial<StatusInput>, {ready: boolean; started: boolean}]> = [
    ['no probes: ready once running', appSpec, {}, {ready: true, started: true}],
    [
      'a readiness probe and no supervisor: not ready (nothing probes it)',
      {...appSpec, hasReadinessProbe: true},
      {},
      {ready: false, started: true},
    ],
    [
      'a readiness probe failing, as the supervisor records: not ready',
      {...appSpec, hasReadinessProbe: true},
      {recorded: {app: {ready: false, started: true}}},
      {ready: false, started: true},
    ],
    [
      'the readiness probe passed, as the supervisor records: ready',
      {...appSpec, hasReadinessProbe: true},
      {recorded: {app: {ready: true, started: true}}},
      {ready: true, started: true},
    ],
    [
      'a startup probe not passed yet: neither started nor ready',
      {...appSpec, hasStartupProbe: true},
      {recorded: {app: {ready: true, started: false}}},
      {ready: false, started: false},
    ],
    [
      'the in-process prober of --wait-for ready saw it ready',
      {...appSpec, hasReadinessProbe: true},
      {probedReady: new Set(['app-0'])},
      {ready: true, started: true},
    ],
  ]

  it.each(readiness)('%s', (_name, spec, overrides, expected) => {
    expect(containerStatusOf(spec, input({instances: running, ...overrides}))).toMatchObject(expected)
  })
})

describe('podConditionsOf', () => {
  const status = (overrides: Partial<StatusInput>, spec: StatusSpec = appSpec) => containerStatusOf(spec, input(overrides))
  const byType = (conditions: ReturnType<typeof podConditionsOf>) => Object.fromEntries(conditions.map((c) => [c.type, c.status]))

  it('Ready and ContainersReady are False while a readiness probe fails, True once it passes', () => {
    const probed = {...appSpec, hasReadinessProbe: true}
    const failing = status({instances: [instance('app', 0, 'Running')], recorded: {app: {ready: false, started: true}}}, probed)
    expect(byType(podConditionsOf([failing], true))).toEqual({PodScheduled: true, Initialized: true, ContainersReady: false, Ready: false})
    const passing = status({instances: [instance('app', 0, 'Running')], recorded: {app: {ready: true, started: true}}}, probed)
    expect(byType(podConditionsOf([passing], true))).toEqual({PodScheduled: true, Initialized: true, ContainersReady: true, Ready: true})
    expect(byType(podConditionsOf([passing], false))).toMatchObject({ContainersReady: true, Ready: false})
  })

  it('a container in back-off keeps the pod initialized but not ready', () => {
    const setup = status({instances: [instance('setup', 0, 'Exited', {type: 'init', exitCode: 0})]}, {name: 'setup', type: 'init'})
    const app = status({instances: crashed})
    expect(app.waiting?.reason).toBe('CrashLoopBackOff')
    expect(byType(podConditionsOf([setup, app], true))).toEqual({
      PodScheduled: true,
      Initialized: true,
      ContainersReady: false,
      Ready: false,
    })
  })

  it('a sidecar counts for ContainersReady; a completed init container does not hold it back', () => {
    const sidecarSpec: StatusSpec = {name: 'proxy', type: 'init', sidecar: true, hasReadinessProbe: true}
    const proxy = status({instances: [instance('proxy', 0, 'Running', {type: 'init'})]}, sidecarSpec)
    const app = status({instances: [instance('app', 0, 'Running')]})
    expect(byType(podConditionsOf([proxy, app], true))).toMatchObject({ContainersReady: false, Ready: false})
    const ready = status(
      {instances: [instance('proxy', 0, 'Running', {type: 'init'})], recorded: {proxy: {ready: true, started: true}}},
      sidecarSpec,
    )
    expect(byType(podConditionsOf([ready, app], true))).toMatchObject({ContainersReady: true, Ready: true})
  })

  it('an app container never created: not initialized', () => {
    const setup = status({instances: [instance('setup', 0, 'Running', {type: 'init'})]}, {name: 'setup', type: 'init'})
    expect(byType(podConditionsOf([setup, status({instances: []})], true))).toMatchObject({Initialized: false, Ready: false})
  })
})

describe('describeContainerState (the STATE column)', () => {
  it.each([
    [{instances: crashed}, appSpec, 'Waiting: CrashLoopBackOff (16s left)'],
    [{instances: crashed, now: T0 + 24_001}, appSpec, 'Waiting: CrashLoopBackOff (1s left)'],
    [{instances: crashed, now: T0 + 26_000}, appSpec, 'Terminated: Error (exit 3)'],
    [
      {instances: [instance('setup', 0, 'Exited', {type: 'init', exitCode: 0})]},
      {name: 'setup', type: 'init'} as StatusSpec,
      'Terminated: Completed (exit 0)',
    ],
    [{instances: [instance('app', 0, 'Running')]}, appSpec, 'Running'],
    [{instances: []}, appSpec, 'Waiting: ContainerCreating'],
  ] as Array<[Partial<StatusInput>, StatusSpec, string]>)('%#: %s', (overrides, spec, text) => {
    expect(describeContainerState(containerStatusOf(spec, input(overrides)))).toBe(text)
  })
})
