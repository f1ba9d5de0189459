import {describe, expect, it} from 'vitest'

import type {PodStatusReport} from '../../../../src/lib/kubelet/status/pod-status.js'
import {describePodFailure, describePodState, podConditionMet} from '../../../../src/lib/kubelet/status/wait-for-pod.js'

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
