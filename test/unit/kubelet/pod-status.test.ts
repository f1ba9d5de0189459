import {describe, expect, it} from 'vitest'

import {
  computePhase,
  describePodFailure,
  describePodState,
  isPodReady,
  podConditionMet,
  type PhaseInput,
  type PodStatusReport,
} from '../../../src/lib/kubelet/pod-status.js'
import {parseRestartPolicy} from '../../../src/lib/kube/labels.js'

type C = PhaseInput['containers'][number]
const app = (name: string, state: C['state'], exitCode: number | null = state === 'Exited' ? 0 : null): C => ({name, type: 'app', state, exitCode})
const init = (name: string, state: C['state'], exitCode: number | null = state === 'Exited' ? 0 : null): C => ({name, type: 'init', state, exitCode})

describe('computePhase (the kubelet getPhase from runtime state)', () => {
  const cases: Array<[string, Omit<PhaseInput, 'sandboxReady'> & {sandboxReady?: boolean}, string]> = [
    ['no containers yet', {restartPolicy: 'Always', containers: []}, 'Pending'],
    ['init container running', {restartPolicy: 'Always', containers: [init('setup', 'Running')]}, 'Pending'],
    ['init container created', {restartPolicy: 'Always', containers: [init('setup', 'Created')]}, 'Pending'],
    ['init done, app not created yet', {restartPolicy: 'Always', containers: [init('setup', 'Exited', 0)]}, 'Pending'],
    ['init failed, Never', {restartPolicy: 'Never', containers: [init('setup', 'Exited', 1)]}, 'Failed'],
    ['init failed, OnFailure: will retry', {restartPolicy: 'OnFailure', containers: [init('setup', 'Exited', 1)]}, 'Pending'],
    ['init failed, Always: will retry', {restartPolicy: 'Always', containers: [init('setup', 'Exited', 2)]}, 'Pending'],
    [
      'init retry created after a failure, Never is not possible but OnFailure waits',
      {restartPolicy: 'OnFailure', containers: [init('setup', 'Created'), init('setup', 'Exited', 1)]},
      'Pending',
    ],
    ['app created, not started', {restartPolicy: 'Always', containers: [init('setup', 'Exited', 0), app('web', 'Created')]}, 'Pending'],
    ['app running', {restartPolicy: 'Always', containers: [init('setup', 'Exited', 0), app('web', 'Running')]}, 'Running'],
    ['one running, one waiting', {restartPolicy: 'Always', containers: [app('a', 'Running'), app('b', 'Created')]}, 'Pending'],
    ['one running, one exited', {restartPolicy: 'Never', containers: [app('a', 'Running'), app('b', 'Exited', 1)]}, 'Running'],
    ['unknown state', {restartPolicy: 'Always', containers: [app('a', 'Running'), app('b', 'Unknown')]}, 'Pending'],
    ['all exited 0, Always: kubelet restarts them', {restartPolicy: 'Always', containers: [app('a', 'Exited', 0)]}, 'Running'],
    ['all exited 0, Never', {restartPolicy: 'Never', containers: [app('a', 'Exited', 0), app('b', 'Exited', 0)]}, 'Succeeded'],
    ['one exited 3, Never', {restartPolicy: 'Never', containers: [app('a', 'Exited', 0), app('b', 'Exited', 3)]}, 'Failed'],
    ['all exited 0, OnFailure', {restartPolicy: 'OnFailure', containers: [app('a', 'Exited', 0)]}, 'Succeeded'],
    ['one exited 3, OnFailure: restarting', {restartPolicy: 'OnFailure', containers: [app('a', 'Exited', 3)]}, 'Running'],
    [
      'restart created after exit 0 counts as stopped, not succeeded',
      {restartPolicy: 'Never', containers: [app('a', 'Created'), app('a', 'Exited', 0)]},
      'Failed',
    ],
    ['newest attempt decides', {restartPolicy: 'Never', containers: [app('a', 'Exited', 0), app('a', 'Exited', 1)]}, 'Succeeded'],
    // podctl has no kubelet: a stopped sandbox running nothing is terminal whatever the restart policy.
    ['stopped sandbox, all exited 0, Always', {restartPolicy: 'Always', sandboxReady: false, containers: [app('a', 'Exited', 0)]}, 'Succeeded'],
    ['stopped sandbox, one exited 137', {restartPolicy: 'Always', sandboxReady: false, containers: [app('a', 'Exited', 137)]}, 'Failed'],
    ['stopped sandbox, no containers', {restartPolicy: 'Always', sandboxReady: false, containers: []}, 'Failed'],
    ['stopped sandbox, init failed, OnFailure', {restartPolicy: 'OnFailure', sandboxReady: false, containers: [init('i', 'Exited', 1)]}, 'Failed'],
    ['stopped sandbox but a container still runs', {restartPolicy: 'Always', sandboxReady: false, containers: [app('a', 'Running')]}, 'Running'],
  ]

  it.each(cases)('%s', (_name, input, phase) => {
    expect(computePhase({sandboxReady: true, ...input})).toBe(phase)
  })
})

describe('isPodReady', () => {
  it('needs phase Running, every app container running and a ready sandbox', () => {
    const input: PhaseInput = {restartPolicy: 'Always', sandboxReady: true, containers: [init('i', 'Exited', 0), app('a', 'Running'), app('b', 'Running')]}
    expect(isPodReady('Running', input)).toBe(true)
    expect(isPodReady('Running', {...input, sandboxReady: false})).toBe(false)
    expect(isPodReady('Pending', input)).toBe(false)
    expect(isPodReady('Running', {...input, containers: [app('a', 'Running'), app('b', 'Exited', 1)]})).toBe(false)
    // Phase Running because Always restarts them, but nothing runs: not ready.
    expect(isPodReady('Running', {...input, containers: [app('a', 'Exited', 0)]})).toBe(false)
  })
})

describe('parseRestartPolicy', () => {
  it('defaults to Always like Kubernetes', () => {
    expect(parseRestartPolicy(undefined)).toBe('Always')
    expect(parseRestartPolicy('never')).toBe('Always')
    expect(parseRestartPolicy('Never')).toBe('Never')
    expect(parseRestartPolicy('OnFailure')).toBe('OnFailure')
  })
})

function report(overrides: Partial<PodStatusReport>): PodStatusReport {
  return {
    name: 'web',
    namespace: 'default',
    uid: 'u',
    fullName: 'web_default',
    phase: 'Running',
    ip: '10.0.0.2',
    ips: ['10.0.0.2'],
    restartPolicy: 'Always',
    ready: false,
    sandboxes: [{id: 's1', attempt: 0, state: 'Ready', createdAt: '2024-01-01T00:00:00.000Z', ip: '10.0.0.2'}],
    containers: [],
    ...overrides,
  }
}

describe('podConditionMet', () => {
  it.each([
    ['running', {phase: 'Running'}, true],
    ['running', {phase: 'Pending'}, false],
    ['ready', {phase: 'Running', ready: false}, false],
    ['ready', {phase: 'Running', ready: true}, true],
    ['completed', {phase: 'Succeeded'}, true],
    ['completed', {phase: 'Failed'}, true],
    ['completed', {phase: 'Running'}, false],
    ['deleted', {phase: 'Succeeded'}, false],
  ] as const)('%s with %o → %s', (condition, overrides, met) => {
    expect(podConditionMet(condition, report(overrides))).toBe(met)
  })

  it('deleted is met only when the pod is gone', () => {
    expect(podConditionMet('deleted', undefined)).toBe(true)
    expect(podConditionMet('running', undefined)).toBe(false)
    expect(podConditionMet('completed', undefined)).toBe(false)
  })
})

describe('describing a pod', () => {
  const container = {
    id: 'c',
    podSandboxId: 's1',
    type: 'app' as const,
    image: 'busybox',
    imageRef: 'sha256:x',
    attempt: 0,
    createdAt: null,
    startedAt: null,
    finishedAt: null,
    reason: '',
    message: '',
  }

  it('states the phase, sandbox and newest attempt of each container', () => {
    const text = describePodState(
      report({
        phase: 'Pending',
        containers: [
          {...container, name: 'app', state: 'Created', exitCode: null},
          {...container, name: 'app', state: 'Exited', exitCode: 1},
          {...container, name: 'setup', type: 'init', state: 'Exited', exitCode: 0},
        ],
      }),
    )
    expect(text).toBe('phase Pending, sandbox Ready; containers: app Created, setup Exited(0)')
    expect(describePodState(undefined)).toBe('the pod does not exist')
  })

  it('names the failed container and its exit code', () => {
    const failed = report({phase: 'Failed', containers: [{...container, name: 'job', state: 'Exited', exitCode: 3, reason: 'Error'}]})
    expect(describePodFailure(failed)).toBe('pod web_default failed: container job exited with code 3 (Error)')
  })
})
