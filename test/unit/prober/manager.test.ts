import {afterEach, beforeEach, describe, expect, it, vi} from 'vitest'

import type {CriClient} from '../../../src/lib/cri/client.js'
import {parsePod} from '../../../src/lib/manifest/pod.js'
import {type ProbeEvent, ProbeManager, type ProbeRequest} from '../../../src/lib/prober/manager.js'
import type {ProbeOutcome} from '../../../src/lib/prober/types.js'

/** A pod with one container "app" and the given probes (objects as in a manifest). */
function pod(probes: Record<string, unknown>) {
  return parsePod(
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {name: 'web', uid: 'u-1'},
      spec: {containers: [{name: 'app', image: 'busybox', ports: [{name: 'http', containerPort: 8080}], ...probes}]},
    } as never,
    'pod.yaml',
  )
}

const exec = (extra: Record<string, unknown> = {}) => ({exec: {command: ['check']}, ...extra})

/** A scripted prober: each kind answers from its queue (the last answer repeats). */
function scripted(answers: Partial<Record<string, ProbeOutcome['status'][]>>) {
  const calls: Array<{kind: string; at: number}> = []
  const run = async ({kind}: ProbeRequest): Promise<ProbeOutcome> => {
    calls.push({kind, at: Date.now()})
    const queue = answers[kind] ?? ['success']
    const status = queue.length > 1 ? queue.shift()! : queue[0]
    return {status, output: `${kind} said ${status}`, exitCode: status === 'failure' ? 1 : 0}
  }

  return {calls, run}
}

/** The runtime's ContainerStatus as the manager asks it after an errored probe: these containers have exited. */
const exited = new Set<string>()

const runtime = {
  async runtime(method: string, request: {containerId: string}) {
    if (method !== 'containerStatus') throw new Error(`unexpected ${method}`)
    return {status: {state: exited.has(request.containerId) ? 'CONTAINER_EXITED' : 'CONTAINER_RUNNING'}}
  },
} as unknown as CriClient

function manager(run: (request: ProbeRequest) => Promise<ProbeOutcome>, events: ProbeEvent[] = []) {
  return new ProbeManager({client: runtime, runProbe: run, onEvent: (event) => events.push(event), random: () => 0.5})
}

const T0 = Date.UTC(2026, 0, 1)

describe('ProbeManager', () => {
  beforeEach(() => {
    vi.useFakeTimers()
    vi.setSystemTime(T0)
  })

  afterEach(() => {
    vi.useRealTimers()
  })

  it('tells onProbed of every probe that ran (thresholds aside) and onLate how late each period tick ran', async () => {
    const script = scripted({liveness: ['success', 'failure', 'success']})
    const probed: string[] = []
    const late: number[] = []
    const probes = new ProbeManager({
      client: runtime,
      runProbe: script.run,
      random: () => 0.5,
      onProbed: (target, kind, outcome) => probed.push(`${target.pod.name}/${target.containerName} ${kind} ${outcome.status}`),
      onLate: (lateMs) => late.push(lateMs),
    })
    const p = pod({livenessProbe: exec({periodSeconds: 1, failureThreshold: 3})})
    probes.addContainer({pod: p, podSandboxId: 's', containerName: 'app', containerId: 'c1', startedAtMs: T0})
    await vi.advanceTimersByTimeAsync(2000)
    expect(probed).toEqual(['web/app liveness success', 'web/app liveness failure', 'web/app liveness success'])
    // Fake timers fire on time: two ticks, each 0 ms late.
    expect(late).toEqual([0, 0])
    await probes.stop()
  })

  it('counts failureThreshold before readiness flips, and successThreshold before it comes back', async () => {
    const script = scripted({readiness: ['success', 'failure', 'failure', 'failure', 'success', 'success']})
    const events: ProbeEvent[] = []
    const probes = manager(script.run, events)
    const changes: string[] = []
    probes.onResult((id, kind, result) => changes.push(`${id} ${kind} ${result}`))
    const p = pod({readinessProbe: exec({periodSeconds: 1, failureThreshold: 3, successThreshold: 2})})
    probes.addContainer({pod: p, podSandboxId: 's', containerName: 'app', containerId: 'c1', startedAtMs: T0})
    expect(probes.result('c1', 'readiness')).toBe('failure')
    // success (run 1 < 2): still failure
    await vi.advanceTimersByTimeAsync(0)
    expect(probes.result('c1', 'readiness')).toBe('failure')
    // failure x3 → failure (already), then success x2 → success
    await vi.advanceTimersByTimeAsync(3000)
    expect(probes.result('c1', 'readiness')).toBe('failure')
    await vi.advanceTimersByTimeAsync(1000)
    expect(probes.result('c1', 'readiness')).toBe('failure')
    await vi.advanceTimersByTimeAsync(1000)
    expect(probes.result('c1', 'readiness')).toBe('success')
    expect(changes).toEqual(['c1 readiness failure', 'c1 readiness success'])
    expect(script.calls.map((call) => call.at - T0)).toEqual([0, 1000, 2000, 3000, 4000, 5000])
    expect(events.filter((event) => event.reason === 'Unhealthy').map((event) => event.message)).toEqual([
      'Readiness probe failed: readiness said failure',
      'Readiness probe failed: readiness said failure',
      'Readiness probe failed: readiness said failure',
    ])
    expect(probes.lastOutput('c1', 'readiness')).toEqual({output: 'readiness said success', exitCode: 0})
    await probes.stop()
  })

  it('waits initialDelaySeconds from the container start, probing on the period ticks', async () => {
    const script = scripted({liveness: ['success']})
    const probes = manager(script.run)
    const p = pod({livenessProbe: exec({initialDelaySeconds: 5, periodSeconds: 2})})
    probes.addContainer({pod: p, podSandboxId: 's', containerName: 'app', containerId: 'c1', startedAtMs: T0})
    await vi.advanceTimersByTimeAsync(7000)
    // Ticks at 0, 2, 4 are before the delay; 6 is the first probe.
    expect(script.calls.map((call) => call.at - T0)).toEqual([6000])
    await probes.stop()
  })

  it('probes at once a container whose start the runtime puts a moment ahead of this clock (no initialDelaySeconds)', async () => {
    const script = scripted({readiness: ['success']})
    const probes = manager(script.run)
    // The kubelet truncates the time since the start toward zero: 0.4 s ahead is 0 s, not -1 s.
    const p = pod({readinessProbe: exec({periodSeconds: 10})})
    probes.addContainer({pod: p, podSandboxId: 's', containerName: 'app', containerId: 'c1', startedAtMs: T0 + 400})
    await vi.advanceTimersByTimeAsync(100)
    expect(script.calls.map((call) => call.at - T0)).toEqual([0])
    await probes.stop()
  })

  it('holds liveness and readiness until the startup probe succeeds, then probes readiness at once', async () => {
    const script = scripted({startup: ['failure', 'failure', 'success'], readiness: ['success']})
    const probes = manager(script.run)
    const p = pod({
      startupProbe: exec({periodSeconds: 1, failureThreshold: 5}),
      livenessProbe: exec({periodSeconds: 10}),
      readinessProbe: exec({periodSeconds: 10}),
    })
    probes.addContainer({pod: p, podSandboxId: 's', containerName: 'app', containerId: 'c1', startedAtMs: T0})
    expect(probes.result('c1', 'startup')).toBe('unknown')
    expect(probes.result('c1', 'liveness')).toBe('success')
    expect(probes.isStarted('c1')).toBe(false)
    await vi.advanceTimersByTimeAsync(1500)
    expect(script.calls.map((call) => call.kind)).toEqual(['startup', 'startup'])
    expect(probes.result('c1', 'readiness')).toBe('failure')
    await vi.advanceTimersByTimeAsync(1000)
    expect(probes.result('c1', 'startup')).toBe('success')
    expect(probes.isStarted('c1')).toBe(true)
    // The readiness probe ran right after startup succeeded, not at its next 10 s tick.
    expect(probes.result('c1', 'readiness')).toBe('success')
    expect(script.calls.filter((call) => call.kind === 'readiness').map((call) => call.at - T0)).toEqual([2000])
    // Startup probes stop once started; liveness runs on its own tick (10 s).
    await vi.advanceTimersByTimeAsync(9000)
    expect(script.calls.filter((call) => call.kind === 'startup')).toHaveLength(3)
    expect(script.calls.filter((call) => call.kind === 'liveness').map((call) => call.at - T0)).toEqual([10_000])
    await probes.stop()
  })

  it('holds a liveness worker after it fails failureThreshold times, until a new container', async () => {
    const script = scripted({liveness: ['failure']})
    const events: ProbeEvent[] = []
    const probes = manager(script.run, events)
    const p = pod({livenessProbe: exec({periodSeconds: 1})})
    probes.addContainer({pod: p, podSandboxId: 's', containerName: 'app', containerId: 'c1', startedAtMs: T0})
    await vi.advanceTimersByTimeAsync(10_000)
    expect(probes.result('c1', 'liveness')).toBe('failure')
    expect(script.calls).toHaveLength(3)
    expect(events.map((event) => `${event.type} ${event.reason} ${event.containerName}: ${event.message}`)).toContain(
      'Warning Unhealthy app: Liveness probe failed: liveness said failure',
    )
    // The restarted container: results reset, probing resumes.
    probes.removeContainer('c1')
    probes.addContainer({pod: p, podSandboxId: 's', containerName: 'app', containerId: 'c2', startedAtMs: Date.now()})
    expect(probes.result('c1', 'liveness')).toBe('unknown')
    expect(probes.result('c2', 'liveness')).toBe('success')
    await vi.advanceTimersByTimeAsync(500)
    expect(script.calls).toHaveLength(4)
    await probes.stop()
  })

  it('throws away errored probes and keeps the last result', async () => {
    const script = scripted({readiness: ['unknown']})
    const events: ProbeEvent[] = []
    const probes = manager(async (request) => ({...(await script.run(request)), error: new Error('runtime hiccup')}), events)
    probes.addContainer({pod: pod({readinessProbe: exec()}), podSandboxId: 's', containerName: 'app', containerId: 'c1', startedAtMs: T0})
    await vi.advanceTimersByTimeAsync(0)
    expect(probes.result('c1', 'readiness')).toBe('failure')
    expect(events.map((event) => event.message)).toEqual(['Readiness probe errored: runtime hiccup'])
    await probes.stop()
  })

  it('says nothing of a probe that errored because its container has just exited', async () => {
    const script = scripted({readiness: ['unknown']})
    const events: ProbeEvent[] = []
    const probes = manager(
      async (request) => ({...(await script.run(request)), error: new Error('container is in CONTAINER_EXITED state')}),
      events,
    )
    exited.add('gone')
    probes.addContainer({pod: pod({readinessProbe: exec()}), podSandboxId: 's', containerName: 'app', containerId: 'gone', startedAtMs: T0})
    await vi.advanceTimersByTimeAsync(0)
    expect(script.calls.length).toBeGreaterThan(0)
    expect(events).toEqual([])
    await probes.stop()
  })

  it('without probes: liveness and startup succeed, readiness is started-and-running', async () => {
    const probes = manager(scripted({}).run)
    const changes: string[] = []
    probes.onResult((id, kind, result) => changes.push(`${id} ${kind} ${result}`))
    probes.addContainer({pod: pod({}), podSandboxId: 's', containerName: 'app', containerId: 'c1', startedAtMs: T0})
    expect(probes.result('c1', 'liveness')).toBe('success')
    expect(probes.result('c1', 'startup')).toBe('success')
    expect(probes.result('c1', 'readiness')).toBe('success')
    expect(probes.result('nope', 'readiness')).toBe('unknown')
    probes.containerStopped('c1')
    expect(probes.result('c1', 'readiness')).toBe('failure')
    expect(changes).toEqual(['c1 readiness failure'])
    await probes.stop()
  })

  it('a stopped container is not ready and no longer probed', async () => {
    const script = scripted({readiness: ['success']})
    const probes = manager(script.run)
    probes.addContainer({
      pod: pod({readinessProbe: exec({periodSeconds: 1})}),
      podSandboxId: 's',
      containerName: 'app',
      containerId: 'c1',
      startedAtMs: T0,
    })
    await vi.advanceTimersByTimeAsync(0)
    expect(probes.result('c1', 'readiness')).toBe('success')
    probes.containerStopped('c1')
    expect(probes.result('c1', 'readiness')).toBe('failure')
    await vi.advanceTimersByTimeAsync(5000)
    expect(script.calls).toHaveLength(1)
    await probes.stop()
  })

  it('jitters the first probe of a container found running when the manager has just started', async () => {
    const script = scripted({readiness: ['success']})
    const probes = manager(script.run)
    // Started before the manager: the kubelet-restart case; random() = 0.5 of a 10 s period.
    probes.addContainer({
      pod: pod({readinessProbe: exec()}),
      podSandboxId: 's',
      containerName: 'app',
      containerId: 'c1',
      startedAtMs: T0 - 60_000,
    })
    await vi.advanceTimersByTimeAsync(4999)
    expect(script.calls).toHaveLength(0)
    await vi.advanceTimersByTimeAsync(1)
    expect(script.calls.map((call) => call.at - T0)).toEqual([5000])
    await vi.advanceTimersByTimeAsync(10_000)
    expect(script.calls.map((call) => call.at - T0)).toEqual([5000, 15_000])
    await probes.stop()
  })

  it('after a slow probe, probes at once for the one tick the ticker kept, dropping the others', async () => {
    const calls: number[] = []
    const probes = manager(async () => {
      calls.push(Date.now() - T0)
      await new Promise((resolve) => {
        setTimeout(resolve, 2500)
      })
      return {status: 'success', output: ''}
    })
    probes.addContainer({
      pod: pod({readinessProbe: exec({periodSeconds: 1})}),
      podSandboxId: 's',
      containerName: 'app',
      containerId: 'c1',
      startedAtMs: T0,
    })
    await vi.advanceTimersByTimeAsync(6000)
    // 0-2.5 s: ticks 1 and 2 came, one was kept → at once at 2.5; 2.5-5: ticks 3, 4 → at once at 5.
    expect(calls).toEqual([0, 2500, 5000])
    // stop() waits for the probe in flight.
    const stopping = probes.stop()
    await vi.advanceTimersByTimeAsync(2500)
    await stopping
  })
})
