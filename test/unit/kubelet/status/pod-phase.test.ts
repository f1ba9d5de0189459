import {describe, expect, it} from 'vitest'

import {computePhase, isPodReady, type PhaseInput} from '../../../../src/lib/kubelet/status/pod-phase.js'

type C = PhaseInput['containers'][number]
const app = (name: string, state: C['state'], exitCode: number | null = state === 'Exited' ? 0 : null): C => ({
  name,
  type: 'app',
  state,
  exitCode,
})
const init = (name: string, state: C['state'], exitCode: number | null = state === 'Exited' ? 0 : null): C => ({
  name,
  type: 'init',
  state,
  exitCode,
})

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
    [
      'stopped sandbox, all exited 0, Always',
      {restartPolicy: 'Always', sandboxReady: false, containers: [app('a', 'Exited', 0)]},
      'Succeeded',
    ],
    ['stopped sandbox, one exited 137', {restartPolicy: 'Always', sandboxReady: false, containers: [app('a', 'Exited', 137)]}, 'Failed'],
    ['stopped sandbox, no containers', {restartPolicy: 'Always', sandboxReady: false, containers: []}, 'Failed'],
    [
      'stopped sandbox, init failed, OnFailure',
      {restartPolicy: 'OnFailure', sandboxReady: false, containers: [init('i', 'Exited', 1)]},
      'Failed',
    ],
    [
      'stopped sandbox but a container still runs',
      {restartPolicy: 'Always', sandboxReady: false, containers: [app('a', 'Running')]},
      'Running',
    ],
  ]

  it.each(cases)('%s', (_name, input, phase) => {
    expect(computePhase({sandboxReady: true, ...input})).toBe(phase)
  })
})

describe('isPodReady', () => {
  it('needs phase Running, every app container running and a ready sandbox', () => {
    const input: PhaseInput = {
      restartPolicy: 'Always',
      sandboxReady: true,
      containers: [init('i', 'Exited', 0), app('a', 'Running'), app('b', 'Running')],
    }
    expect(isPodReady('Running', input)).toBe(true)
    expect(isPodReady('Running', {...input, sandboxReady: false})).toBe(false)
    expect(isPodReady('Pending', input)).toBe(false)
    expect(isPodReady('Running', {...input, containers: [app('a', 'Running'), app('b', 'Exited', 1)]})).toBe(false)
    // Phase Running because Always restarts them, but nothing runs: not ready.
    expect(isPodReady('Running', {...input, containers: [app('a', 'Exited', 0)]})).toBe(false)
  })
})
