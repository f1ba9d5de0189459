import {describe, expect, it} from 'vitest'

import {containerHash} from '../../../../src/lib/kube/labels.js'
import {
  computePodActions,
  type ObservedContainer,
  type ObservedPod,
  podSandboxChanged,
  shouldRestart,
} from '../../../../src/lib/kubelet/kuberuntime/pod-actions.js'
import type {ContainerModel, PodModel} from '../../../../src/lib/manifest/model.js'

const NOW = 1_000_000_000

function container(name: string, extra: Partial<ContainerModel> = {}): ContainerModel {
  return {
    name,
    image: 'busybox',
    command: ['sleep', '1d'],
    args: [],
    env: [],
    ports: [],
    resources: {limits: {}, requests: {}},
    lifecycle: {},
    volumeMounts: [],
    terminationMessagePath: '/dev/termination-log',
    terminationMessagePolicy: 'File',
    ...extra,
  }
}

function pod(extra: Partial<PodModel> = {}): PodModel {
  return {
    source: 'pod.yaml',
    name: 'web',
    namespace: 'default',
    uid: 'u1',
    uidGenerated: false,
    labels: {},
    annotations: {},
    restartPolicy: 'Always',
    hostNetwork: false,
    hostPID: false,
    hostIPC: false,
    shareProcessNamespace: false,
    dnsPolicy: 'ClusterFirst',
    volumes: [],
    initContainers: [],
    containers: [container('a'), container('b')],
    ...extra,
  }
}

const sandbox = {id: 'sb1', attempt: 0, ready: true, hasIp: true, createdAtMs: NOW - 60_000}

function observed(spec: PodModel, states: Record<string, Partial<ObservedContainer>>): ObservedPod {
  const containers = Object.entries(states).map(([name, state]): ObservedContainer => {
    const model = [...spec.containers, ...spec.initContainers].find((c) => c.name === name) ?? container(name)
    return {
      id: `id-${name}-${state.attempt ?? 0}`,
      name,
      type: spec.initContainers.some((c) => c.name === name) ? 'init' : 'app',
      podSandboxId: 'sb1',
      state: 'Running',
      attempt: 0,
      hash: containerHash(model),
      exitCode: null,
      reason: '',
      startedAtMs: NOW - 30_000,
      finishedAtMs: null,
      ...state,
    }
  })
  return {sandboxes: [sandbox], containers}
}

describe('computePodActions (the kubelet computePodActions)', () => {
  it('does nothing for a pod whose containers all run as specified', () => {
    const spec = pod()
    const actions = computePodActions(spec, observed(spec, {a: {}, b: {}}), {now: NOW})
    expect(actions).toMatchObject({killPod: false, createSandbox: false, containersToStart: [], containersToKill: [], sandboxId: 'sb1'})
  })

  it('restarts an exited container under Always with restart count + 1, the other untouched', () => {
    const spec = pod()
    const actions = computePodActions(spec, observed(spec, {a: {state: 'Exited', exitCode: 1, attempt: 2}, b: {}}), {now: NOW})
    expect(actions.containersToStart.map((s) => [s.name, s.restartCount])).toEqual([['a', 3]])
    expect(actions.containersToKill).toEqual([])
  })

  it('follows restartPolicy: OnFailure keeps a success, Never keeps a failure', () => {
    expect(shouldRestart(pod({restartPolicy: 'OnFailure'}), {state: 'Exited', exitCode: 0} as ObservedContainer)).toBe(false)
    expect(shouldRestart(pod({restartPolicy: 'OnFailure'}), {state: 'Exited', exitCode: 2} as ObservedContainer)).toBe(true)
    expect(shouldRestart(pod({restartPolicy: 'Never'}), {state: 'Exited', exitCode: 2} as ObservedContainer)).toBe(false)
    expect(shouldRestart(pod({restartPolicy: 'Never'}), undefined)).toBe(true)
  })

  it('stops the sandbox when every container has terminated for good', () => {
    const spec = pod({restartPolicy: 'Never'})
    const actions = computePodActions(spec, observed(spec, {a: {state: 'Exited', exitCode: 0}, b: {state: 'Exited', exitCode: 3}}), {
      now: NOW,
    })
    expect(actions).toMatchObject({killPod: true, createSandbox: false, killReason: 'Completed'})
  })

  it('kills and restarts a container whose definition (hash) changed', () => {
    const spec = pod({containers: [container('a', {env: [{name: 'X', value: '1'}]}), container('b')]})
    const state = observed(spec, {a: {hash: containerHash(container('a'))}, b: {}})
    const actions = computePodActions(spec, state, {now: NOW})
    expect(actions.containersToKill).toEqual([
      {id: 'id-a-0', name: 'a', type: 'app', reason: 'changed', message: 'Container a definition changed, will be restarted'},
    ])
    expect(actions.containersToStart.map((s) => [s.name, s.restartCount])).toEqual([['a', 1]])
  })

  it('kills a container whose liveness probe failed; restarts it unless restartPolicy is Never', () => {
    const spec = pod()
    const failures = new Map([['id-a-0', 'liveness' as const]])
    const actions = computePodActions(spec, observed(spec, {a: {}, b: {}}), {now: NOW, probeFailures: failures})
    expect(actions.containersToKill[0].message).toBe('Container a failed liveness probe, will be restarted')
    expect(actions.containersToStart.map((s) => s.name)).toEqual(['a'])
    const never = pod({restartPolicy: 'Never'})
    const noRestart = computePodActions(never, observed(never, {a: {}, b: {}}), {now: NOW, probeFailures: failures})
    expect(noRestart.containersToKill[0].message).toBe('Container a failed liveness probe')
    expect(noRestart.containersToStart).toEqual([])
  })

  it("kills a container whose probe failed within the probe's terminationGracePeriodSeconds, when it sets one", () => {
    const probe = {handler: {exec: {command: ['false']}}, initialDelaySeconds: 0, periodSeconds: 1, timeoutSeconds: 1}
    const thresholds = {successThreshold: 1, failureThreshold: 1}
    const spec = pod({
      containers: [
        container('a', {livenessProbe: {...probe, ...thresholds, terminationGracePeriodSeconds: 3}}),
        container('b', {startupProbe: {...probe, ...thresholds}}),
      ],
    })
    const failures = new Map([
      ['id-a-0', 'liveness' as const],
      ['id-b-0', 'startup' as const],
    ])
    const actions = computePodActions(spec, observed(spec, {a: {}, b: {}}), {now: NOW, probeFailures: failures})
    expect(actions.containersToKill.map((kill) => [kill.name, kill.gracePeriodSeconds])).toEqual([
      ['a', 3],
      ['b', undefined],
    ])
  })

  it('starts a new container and kills one removed from the manifest', () => {
    const spec = pod({containers: [container('a'), container('c')]})
    const state = observed(pod(), {a: {}, b: {}})
    const actions = computePodActions(spec, state, {now: NOW})
    expect(actions.containersToStart.map((s) => [s.name, s.restartCount])).toEqual([['c', 0]])
    expect(actions.containersToKill.map((k) => [k.name, k.message])).toEqual([['b', 'Container b removed from the pod']])
  })

  it('recreates a dead sandbox with attempt + 1 (PodSandboxChanged), but not for a finished Never pod', () => {
    const spec = pod()
    const dead = {...observed(spec, {a: {state: 'Exited', exitCode: 137}}), sandboxes: [{...sandbox, ready: false, attempt: 2}]}
    expect(podSandboxChanged(spec, dead)).toEqual({changed: true, attempt: 3})
    expect(computePodActions(spec, dead, {now: NOW})).toMatchObject({createSandbox: true, attempt: 3})
    expect(computePodActions(pod({restartPolicy: 'Never'}), dead, {now: NOW})).toMatchObject({createSandbox: false})
    const noIp = {...observed(spec, {a: {}}), sandboxes: [{...sandbox, hasIp: false}]}
    expect(podSandboxChanged(spec, noIp).changed).toBe(true)
    expect(podSandboxChanged({...spec, hostNetwork: true}, noIp).changed).toBe(false)
  })

  it('enforces activeDeadlineSeconds from the first sandbox', () => {
    const spec = {...pod(), activeDeadlineSeconds: 30} as PodModel
    expect(computePodActions(spec, observed(spec, {a: {}, b: {}}), {now: NOW})).toMatchObject({
      killPod: true,
      killReason: 'DeadlineExceeded',
    })
    const young = {...pod(), activeDeadlineSeconds: 120} as PodModel
    expect(computePodActions(young, observed(young, {a: {}, b: {}}), {now: NOW}).killPod).toBe(false)
  })

  it('runs regular init containers one at a time, then the app containers', () => {
    const spec = pod({initContainers: [container('i1'), container('i2')]})
    const first = computePodActions(spec, {sandboxes: [sandbox], containers: []}, {now: NOW})
    expect(first.initContainersToStart.map((s) => s.name)).toEqual(['i1'])
    expect(first.containersToStart).toEqual([])
    const running = computePodActions(spec, observed(spec, {i1: {}}), {now: NOW})
    expect(running.waitingForInit).toBe('i1')
    const next = computePodActions(spec, observed(spec, {i1: {state: 'Exited', exitCode: 0}}), {now: NOW})
    expect(next.initContainersToStart.map((s) => s.name)).toEqual(['i2'])
    const done = computePodActions(spec, observed(spec, {i1: {state: 'Exited', exitCode: 0}, i2: {state: 'Exited', exitCode: 0}}), {
      now: NOW,
    })
    expect(done.containersToStart.map((s) => s.name)).toEqual(['a', 'b'])
  })

  it('starts a sidecar and moves on once it runs; restarts it beside the app containers', () => {
    const sidecar = {...container('side'), restartPolicy: 'Always'} as ContainerModel
    const spec = pod({initContainers: [sidecar, container('i2')]})
    const first = computePodActions(spec, {sandboxes: [sandbox], containers: []}, {now: NOW})
    expect(first.initContainersToStart.map((s) => s.name)).toEqual(['side'])
    const next = computePodActions(spec, observed(spec, {side: {}}), {now: NOW})
    expect(next.initContainersToStart.map((s) => s.name)).toEqual(['i2'])
    const later = computePodActions(spec, observed(spec, {side: {state: 'Exited', exitCode: 1}, a: {}, b: {}}), {now: NOW})
    expect(later.initContainersToStart.map((s) => [s.name, s.restartCount])).toEqual([['side', 1]])
    expect(later.containersToStart).toEqual([])
  })
})
