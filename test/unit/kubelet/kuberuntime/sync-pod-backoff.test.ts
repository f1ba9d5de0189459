import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {BackOff} from '../../../../src/lib/kube/backoff.js'
import type {PodEvent} from '../../../../src/lib/kube/events.js'
import {parseDocuments} from '../../../../src/lib/manifest/load.js'
import {parsePod} from '../../../../src/lib/manifest/pod.js'
import {type SyncDeps, syncPod, type SyncSettings} from '../../../../src/lib/kubelet/kuberuntime/sync-pod.js'
import {runPod} from '../../../../src/lib/kubelet/run/run-pod.js'
import {FakePodRuntime} from '../../../support/fake-pod-runtime.js'
import {presentImages} from '../../../support/present-images.js'

const POD = `
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: shop}
spec:
  containers:
  - {name: app, image: "busybox:1.36", command: ["false"]}
`

let fake: FakePodRuntime

beforeAll(async () => {
  fake = await new FakePodRuntime().start()
})

afterAll(async () => {
  await fake.close()
})

function syncSettings(): SyncSettings {
  const root = mkdtempSync(join(tmpdir(), 'podctl-reconciler-'))
  return {logsRoot: join(root, 'logs'), podDirRoot: join(root, 'pods'), hostResolvConf: 'nameserver 10.0.0.2\n', nodeMemoryBytes: 1024 ** 3}
}

/** The running app container exits 1 now (the fake keeps app containers running until told). */
function crash(): void {
  const running = [...fake.containers.values()].find((container) => container.state === 'CONTAINER_RUNNING')!
  running.state = 'CONTAINER_EXITED'
  running.exitCode = 1
  running.reason = 'Error'
  running.finishedAt = String(BigInt(Date.now()) * 1_000_000n)
}

describe('syncPod: the BackOff event', () => {
  it('is sent once per back-off step (per key and exited instance), not on every pass that refuses the restart', async () => {
    const [document] = await parseDocuments(POD, 'pod.yaml')
    const pod = parsePod(document, 'pod.yaml', {newUid: () => 'uid-backoff'})
    const settings = syncSettings()
    const events: PodEvent[] = []
    let clock = Date.now()
    // One ladder across passes, as sync --watch keeps it; a minute's window, so only the clock ends it.
    const deps: SyncDeps = {
      client: fake.client,
      images: presentImages,
      events: (event) => events.push(event),
      signal: new AbortController().signal,
      backOff: new BackOff({initialMs: 60_000, maxMs: 600_000}),
      now: () => clock,
    }
    const started = await runPod(pod, [], {...settings, wait: 'none', replace: false, keepOnFailure: false, remove: false}, deps)
    expect(started.failure).toBeUndefined()
    const pass = async () => {
      const {items} = await fake.client.runtime('listPodSandbox', {})
      const result = await syncPod(pod, items, settings, deps)
      expect(result.failure).toBeUndefined()
      return result
    }

    const backOffs = () => events.filter((event) => event.reason === 'BackOff').length
    crash()
    expect((await pass()).did).toEqual(['started app (restart 1)'])
    crash()
    // Three passes inside one window: each refuses the restart, one says BackOff.
    for (let index = 0; index < 3; index++)
      expect((await pass()).did).toEqual([expect.stringMatching(/^app in back-off for \d+ s \(exited 1\)$/)])
    expect(backOffs()).toBe(1)
    expect(events.find((event) => event.reason === 'BackOff')?.message).toBe(
      'Back-off restarting failed container app in pod web_shop(uid-backoff)',
    )

    // The window ends: restarted; it crashes again, so a new step, and one more BackOff for it. The window runs
    // from the exit, stamped with the real clock (crash()), so it ends 61 s after now, however slow the passes were.
    clock = Date.now() + 61_000
    expect((await pass()).did).toEqual(['started app (restart 2)'])
    crash()
    clock = Date.now()
    await pass()
    await pass()
    expect(backOffs()).toBe(2)
  })
})

describe('syncPod: the crash back-off after liveness-probe kills, as the kubelet decides it', () => {
  /**
   * Measured beside a real kubelet: a container that fails liveness ~15 s after each start was
   * restarted 0.3, 0.3, 0.3, 26, 0.2 and 92 s after its kills. The kubelet's doBackOff checks the
   * first exited instance of the container in the status observed before the pass killed it — the
   * instance of the cycle before — so the first kills restart at once. The pod worker retries a pass
   * refused by the back-off every 10-15 s (13 here), which is where 26 and 92 come from.
   */
  it('replays the kubelet’s gaps: 0, 0, 0, 26, 0, 91 s', async () => {
    const [document] = await parseDocuments(
      POD.replace('command: ["false"]}', 'command: [sleep, "3600"], livenessProbe: {exec: {command: ["false"]}}}'),
      'pod.yaml',
    )
    const pod = parsePod(document, 'pod.yaml', {newUid: () => 'uid-liveness'})
    const settings = syncSettings()
    let clock = Date.now()
    const deps: SyncDeps = {
      client: fake.client,
      images: presentImages,
      events() {},
      signal: new AbortController().signal,
      backOff: new BackOff({initialMs: 10_000, maxMs: 300_000}),
      now: () => clock,
    }
    const started = await runPod(pod, [], {...settings, wait: 'none', replace: false, keepOnFailure: false, remove: false}, deps)
    expect(started.failure).toBeUndefined()
    const nanos = (ms: number) => String(BigInt(ms) * 1_000_000n)
    const app = (state: string) => [...fake.containers.values()].find((c) => c.metadata.name === 'app' && c.state === state)
    // The runtime's clock is the test's: each instance starts and stops when the simulated passes say.
    const stamped = new Set<string>()
    const stamp = () => {
      for (const container of fake.containers.values()) {
        if (container.state === 'CONTAINER_RUNNING' && !stamped.has(`start ${container.id}`)) container.startedAt = nanos(clock)
        if (container.state === 'CONTAINER_EXITED' && !stamped.has(`finish ${container.id}`)) container.finishedAt = nanos(clock)
        stamped.add(`start ${container.id}`)
        if (container.state === 'CONTAINER_EXITED') stamped.add(`finish ${container.id}`)
      }
    }

    const pass = async (probeFailures?: ReadonlyMap<string, 'liveness'>) => {
      const {items} = await fake.client.runtime('listPodSandbox', {})
      const result = await syncPod(pod, items, settings, {...deps, probeFailures})
      expect(result.failure).toBeUndefined()
      stamp()
      return result
    }

    stamp()
    const gaps: number[] = []
    for (let kill = 1; kill <= 6; kill++) {
      clock += 15_000
      const killedAt = clock
      await pass(new Map([[app('CONTAINER_RUNNING')!.id, 'liveness']]))
      while (!app('CONTAINER_RUNNING')) {
        clock += 13_000
        await pass()
      }

      gaps.push(Math.round((clock - killedAt) / 1000))
    }

    expect(gaps).toEqual([0, 0, 0, 26, 0, 91])
  })
})
