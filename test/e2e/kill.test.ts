import {closeSync, existsSync, openSync, readFileSync} from 'node:fs'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {cleanupNamespace, createSandbox, lab, labClient, labEnv, sandboxesIn, uniqueNamespace} from '../support/lab.js'
import {podctl} from '../support/podctl.js'
import {createTestPod, leftovers, pullBusybox} from '../support/pods.js'

const client = labClient()
const ns = uniqueNamespace('kill')
const otherNs = uniqueNamespace('kill-other')
const env = labEnv()

/** Handles SIGTERM: exits within a second of StopContainer's signal. Records its PID for the preStop hook. */
const TRAPS_TERM = 'echo $$ > /tmp/main.pid; trap "exit 0" TERM; while true; do sleep 1; done'
/** Ignores SIGTERM: only the SIGKILL at the end of the grace period ends it. */
const IGNORES_TERM = 'trap "" TERM; while true; do sleep 1; done'

beforeAll(async () => {
  await pullBusybox(client)
})

afterAll(async () => {
  await cleanupNamespace(client, ns)
  await cleanupNamespace(client, otherNs)
  expect(await sandboxesIn(client, ns)).toEqual([])
  expect(await sandboxesIn(client, otherNs)).toEqual([])
  client.close()
})

describe('podctl kill', () => {
  it('runs the preStop hook within the grace period, then stops, then removes everything, its log directory too', async () => {
    const pod = await createTestPod(client, {
      name: 'hooked',
      namespace: ns,
      terminationGracePeriodSeconds: 20,
      containers: [
        {
          name: 'app',
          script: TRAPS_TERM,
          // Writes to the main process's stdout, i.e. the container log, then takes 2 s.
          preStop: {exec: {command: ['sh', '-c', 'echo prestop-ran > /proc/$(cat /tmp/main.pid)/fd/1; sleep 2']}},
        },
      ],
    })
    const logDirectory = `${lab().logRoot}/${ns}_hooked_${pod.uid}`
    // The kill removes the pod's log directory: read the log through a descriptor opened before.
    const log = openSync(`${logDirectory}/app/0.log`, 'r')

    const run = await podctl(['kill', 'hooked', '-n', ns, '-o', 'json'], {env: labEnv({PODCTL_POD_LOGS_ROOT: lab().logRoot})})
    expect(run.stderr).toBe('')
    expect(run.code).toBe(0)
    const [item] = JSON.parse(run.stdout).items
    expect(item).toMatchObject({pod: `hooked_${ns}`, containersStopped: 1, removed: true})
    // preStop (2 s) ran before SIGTERM; the trap then ends the container at once, far below the 20 s grace.
    expect(item.durationMs).toBeGreaterThanOrEqual(2000)
    expect(item.durationMs).toBeLessThan(7000)
    expect(readFileSync(log, 'utf8')).toMatch(/prestop-ran/)
    closeSync(log)
    expect(await leftovers(client, pod.uid)).toEqual({sandboxes: [], containers: []})
    expect(existsSync(logDirectory)).toBe(false)
  })

  it('gives a container that ignores SIGTERM the grace period, then kills it', async () => {
    const pod = await createTestPod(client, {
      name: 'stubborn',
      namespace: ns,
      terminationGracePeriodSeconds: 4,
      containers: [{name: 'app', script: IGNORES_TERM}],
    })
    const run = await podctl(['kill', `stubborn_${ns}`, '-o', 'json'], {env})
    expect(run.code).toBe(0)
    const result = JSON.parse(run.stdout)
    expect(result).toEqual({
      items: [
        {
          pod: `stubborn_${ns}`,
          sandboxIds: [pod.sandboxId],
          containersStopped: 1,
          removed: true,
          durationMs: expect.any(Number),
        },
      ],
      failures: [],
    })
    expect(result.items[0].durationMs).toBeGreaterThanOrEqual(4000)
    expect(result.items[0].durationMs).toBeLessThan(9000)
    expect(await leftovers(client, pod.uid)).toEqual({sandboxes: [], containers: []})
  })

  it('--grace-period overrides the annotation and never goes below 2 s; --force kills at once', async () => {
    const slow = await createTestPod(client, {
      name: 'short',
      namespace: ns,
      terminationGracePeriodSeconds: 30,
      containers: [{name: 'app', script: IGNORES_TERM}],
    })
    const clamped = await podctl(['kill', 'short', '-n', ns, '--grace-period', '1', '-o', 'json'], {env})
    expect(clamped.code).toBe(0)
    const clampedMs = JSON.parse(clamped.stdout).items[0].durationMs
    expect(clampedMs).toBeGreaterThanOrEqual(2000)
    expect(clampedMs).toBeLessThan(6000)
    expect(await leftovers(client, slow.uid)).toEqual({sandboxes: [], containers: []})

    const forced = await createTestPod(client, {
      name: 'forced',
      namespace: ns,
      terminationGracePeriodSeconds: 30,
      containers: [{name: 'app', script: IGNORES_TERM, preStop: {exec: {command: ['sleep', '10']}}}],
    })
    const run = await podctl(['kill', 'forced', '-n', ns, '--force', '-o', 'json'], {env})
    expect(run.code).toBe(0)
    // No 10 s preStop hook, no 30 s grace period: SIGKILL at once.
    expect(JSON.parse(run.stdout).items[0].durationMs).toBeLessThan(3000)
    expect(await leftovers(client, forced.uid)).toEqual({sandboxes: [], containers: []})
  })

  it('--keep leaves the pod stopped; a second kill removes it (NotFound and stopped objects count as done)', async () => {
    const pod = await createTestPod(client, {
      name: 'kept',
      namespace: ns,
      containers: [
        {name: 'app', script: TRAPS_TERM},
        {name: 'done', script: 'exit 0'},
      ],
    })
    const run = await podctl(['kill', pod.sandboxId.slice(0, 12), '--keep'], {env})
    expect(run.code).toBe(0)
    expect(run.stdout).toMatch(new RegExp(`^kept_${ns}: 1 container stopped, kept \\(`))

    const {items} = await client.runtime('listPodSandbox', {filter: {id: pod.sandboxId}})
    expect(items.map((sandbox) => sandbox.state)).toEqual(['SANDBOX_NOTREADY'])
    const {containers} = await client.runtime('listContainers', {filter: {podSandboxId: pod.sandboxId}})
    expect(containers.map((container) => container.state).sort()).toEqual(['CONTAINER_EXITED', 'CONTAINER_EXITED'])

    const again = await podctl(['kill', 'kept', '-n', ns], {env})
    expect(again.code).toBe(0)
    expect(again.stdout).toMatch(new RegExp(`^kept_${ns}: 0 containers stopped, removed \\(`))
    expect(await leftovers(client, pod.uid)).toEqual({sandboxes: [], containers: []})
  })

  it("--all -n NS kills every pod podctl made in that namespace; other namespaces and crictl's pod there stay", async () => {
    const mine = await Promise.all(
      ['a', 'b', 'c'].map((name) => createTestPod(client, {name, namespace: ns, containers: [{name: 'app', script: TRAPS_TERM}]})),
    )
    const other = await createTestPod(client, {name: 'a', namespace: otherNs, containers: [{name: 'app', script: TRAPS_TERM}]})
    // crictl runp of a pod config with the kubelet's labels, in the same namespace: not podctl's.
    const crictls = await createSandbox(client, {name: 'tool', namespace: ns})

    const run = await podctl(['kill', '--all', '-n', ns, '--parallel', '2'], {env})
    expect(run.code).toBe(0)
    expect(run.stderr).toBe(`left alone 1 pod podctl did not make (tool_${ns}); name a pod to kill it\n`)
    expect(
      run.stdout
        .trim()
        .split('\n')
        .map((line) => line.split(':')[0])
        .sort(),
    ).toEqual([`a_${ns}`, `b_${ns}`, `c_${ns}`])
    expect(await sandboxesIn(client, ns)).toEqual([crictls])
    for (const pod of mine) expect(await leftovers(client, pod.uid)).toEqual({sandboxes: [], containers: []})

    const survivor = await leftovers(client, other.uid)
    expect(survivor.sandboxes).toEqual([other.sandboxId])
    expect(survivor.containers).toEqual([other.containerIds.app])
    const {status} = await client.runtime('containerStatus', {containerId: other.containerIds.app})
    expect(status?.state).toBe('CONTAINER_RUNNING')

    const nothing = await podctl(['kill', '--all', '-n', ns], {env})
    expect(nothing.code).toBe(0)
    expect(nothing.stdout).toBe('')
    expect(nothing.stderr).toMatch(/no pods in namespace ".*"; nothing to kill/)
    // Named, it is the user's call.
    const named = await podctl(['kill', 'tool', '-n', ns], {env})
    expect(named.code, named.stderr).toBe(0)
    expect(await sandboxesIn(client, ns)).toEqual([])
  })

  it('-l kills only the pods with the label; a failing preStop hook is a warning, not a failure', async () => {
    const web = await createTestPod(client, {
      name: 'web',
      namespace: ns,
      labels: {tier: 'web'},
      containers: [{name: 'app', script: TRAPS_TERM, preStop: {exec: {command: ['sh', '-c', 'echo going; exit 7']}}}],
    })
    const db = await createTestPod(client, {
      name: 'db',
      namespace: ns,
      labels: {tier: 'db'},
      containers: [{name: 'app', script: TRAPS_TERM}],
    })
    const run = await podctl(['kill', '-l', 'tier=web', '-n', ns], {env})
    expect(run.code).toBe(0)
    expect(run.stdout).toMatch(new RegExp(`^web_${ns}: 1 container stopped, removed`))
    expect(run.stderr).toBe(
      `Warning: FailedPreStopHook web_${ns}/app: Exec lifecycle hook (["sh","-c","echo going; exit 7"]) for Container "app" ` +
        `in Pod "web_${ns}" failed - error: command exited with 7, message: "going"\n`,
    )
    expect(await leftovers(client, web.uid)).toEqual({sandboxes: [], containers: []})
    expect((await leftovers(client, db.uid)).sandboxes).toEqual([db.sandboxId])
    await podctl(['kill', 'db', '-n', ns, '--force'], {env})
  })

  it('an unknown pod exits 5 without stopping the others; --ignore-not-found exits 0', async () => {
    const pod = await createTestPod(client, {name: 'real', namespace: ns, containers: [{name: 'app', script: TRAPS_TERM}]})
    const run = await podctl(['kill', 'ghost', 'real', '-n', ns, '-o', 'json'], {env})
    expect(run.code).toBe(5)
    expect(run.stderr).toMatch(/^Error: pod "ghost" not found in namespace/m)
    const result = JSON.parse(run.stdout)
    expect(result.items.map((item: {pod: string}) => item.pod)).toEqual([`real_${ns}`])
    expect(result.failures).toEqual([{pod: 'ghost', code: 'NotFound', exitCode: 5, message: expect.stringContaining('ghost')}])
    expect(await leftovers(client, pod.uid)).toEqual({sandboxes: [], containers: []})

    const ignored = await podctl(['kill', 'ghost', 'real', '-n', ns, '--ignore-not-found'], {env})
    expect(ignored.code).toBe(0)
    expect(ignored.stderr).toBe('')
    expect(ignored.stdout).toBe('')
  })

  it('refuses contradictory selections before calling the runtime', async () => {
    const both = await podctl(['kill', 'web', '--all'], {env})
    expect(both.code).toBe(2)
    expect(both.stderr).toMatch(/either POD names or --all/)
    const none = await podctl(['kill'], {env})
    expect(none.code).toBe(2)
    expect(none.stderr).toMatch(/no pods given/)
    const force = await podctl(['kill', 'web', '--force', '--grace-period', '5'], {env})
    expect(force.code).toBe(2)
  })
})
