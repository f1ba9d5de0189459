import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {cleanupNamespace, labClient, labEnv, sandboxesIn, uniqueNamespace} from '../support/lab.js'
import {podctl} from '../support/podctl.js'
import {createTestPod, leftovers, pullBusybox, waitForExit} from '../support/pods.js'

const client = labClient()
const ns = uniqueNamespace('status')
const env = labEnv()
/** Exits 0 on SIGTERM, within a second. */
const TRAPS_TERM = 'trap "exit 0" TERM; while true; do sleep 1; done'

beforeAll(async () => {
  await pullBusybox(client)
})

afterAll(async () => {
  await cleanupNamespace(client, ns)
  expect(await sandboxesIn(client, ns)).toEqual([])
  client.close()
})

describe('podctl status POD', () => {
  it('shows a running pod: phase, IP, sandboxes and containers newest first', async () => {
    const pod = await createTestPod(client, {
      name: 'web',
      namespace: ns,
      containers: [
        {name: 'setup', type: 'init', script: 'exit 0'},
        {name: 'app', script: TRAPS_TERM},
      ],
    })

    const json = await podctl(['status', 'web', '-n', ns, '-o', 'json'], {env})
    expect(json.stderr).toBe('')
    expect(json.code).toBe(0)
    const report = JSON.parse(json.stdout)
    expect(report).toMatchObject({
      name: 'web',
      namespace: ns,
      uid: pod.uid,
      fullName: `web_${ns}`,
      phase: 'Running',
      ready: true,
      restartPolicy: 'Always',
      ip: expect.stringMatching(/^10\.234\.\d+\.\d+$/),
      sandboxes: [{id: pod.sandboxId, attempt: 0, state: 'Ready', createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/)}],
    })
    expect(report.ips).toEqual([report.ip])
    expect(report.sandboxes[0].ip).toBe(report.ip)
    expect(report.containers).toEqual([
      expect.objectContaining({
        name: 'app',
        id: pod.containerIds.app,
        type: 'app',
        state: 'Running',
        exitCode: null,
        finishedAt: null,
        attempt: 0,
      }),
      expect.objectContaining({name: 'setup', id: pod.containerIds.setup, type: 'init', state: 'Exited', exitCode: 0, reason: 'Completed'}),
    ])
    expect(report.containers[0].startedAt).toMatch(/^\d{4}-/)
    expect(report.containers[0].image).toContain('podctl/busybox')
    expect(report.containers[0].imageRef).toMatch(/sha256:/)

    const table = await podctl(['status', `web_${ns}`], {env})
    expect(table.code).toBe(0)
    const lines = table.stdout.split('\n')
    expect(lines[0]).toBe('Name:           web')
    expect(table.stdout).toContain(`Namespace:      ${ns}`)
    expect(table.stdout).toContain(`UID:            ${pod.uid}`)
    expect(table.stdout).toContain('Phase:          Running (ready)')
    expect(table.stdout).toContain(`IP:             ${report.ip}`)
    expect(lines.find((line) => line.startsWith('POD ID'))).toMatch(/^POD ID\s+ATTEMPT\s+STATE\s+CREATED\s+IP$/)
    expect(lines.find((line) => line.startsWith(pod.sandboxId.slice(0, 13)))).toMatch(
      new RegExp(`^${pod.sandboxId.slice(0, 13)}\\s+0\\s+Ready\\s+.+ ago\\s+${report.ip.replaceAll('.', String.raw`\.`)}$`),
    )
    expect(lines.find((line) => line.startsWith('CONTAINER'))).toMatch(
      /^CONTAINER\s+NAME\s+TYPE\s+STATE\s+IMAGE\s+ATTEMPT\s+STARTED\s+FINISHED\s+EXIT CODE\s+REASON$/,
    )
    const after = lines.slice(lines.findIndex((line) => line.startsWith('CONTAINER')) + 1)
    // The container table ends at the first blank line; the conditions and per-container readiness follow it.
    const rows = after.slice(0, after.indexOf(''))
    expect(after.slice(after.indexOf('') + 1).find(Boolean)).toBe(
      'Conditions: PodScheduled=True  Initialized=True  ContainersReady=True  Ready=True',
    )
    expect(rows).toHaveLength(2)
    expect(rows[0]).toMatch(
      new RegExp(`^${pod.containerIds.app.slice(0, 13)}\\s+app\\s+app\\s+Running\\s+\\S+busybox:1.36\\s+0\\s+.+ ago\\s+-\\s+-\\s+-$`),
    )
    expect(rows[1]).toMatch(new RegExp(`^${pod.containerIds.setup.slice(0, 13)}\\s+setup\\s+init\\s+Exited\\s+.*\\s+0\\s+Completed$`))

    // An ID prefix names the same pod.
    const byId = await podctl(['status', pod.sandboxId.slice(0, 10), '-o', 'json'], {env})
    expect(JSON.parse(byId.stdout).uid).toBe(pod.uid)
  })

  it('--wait-for completed exits 0 when every container succeeded and 14 when one failed (restartPolicy Never)', async () => {
    // The jobs finish only when the test releases them, so podctl cannot see them complete before
    // it has waited (a fixed "sleep 1" raced podctl's start-up on a loaded machine).
    const WAIT_FOR_GO = 'while [ ! -e /tmp/go ]; do sleep 0.1; done;'
    const okPod = await createTestPod(client, {
      name: 'ok-job',
      namespace: ns,
      restartPolicy: 'Never',
      containers: [{name: 'job', script: `${WAIT_FOR_GO} exit 0`}],
    })
    const badPod = await createTestPod(client, {
      name: 'bad-job',
      namespace: ns,
      restartPolicy: 'Never',
      containers: [{name: 'job', script: `${WAIT_FOR_GO} exit 3`}],
    })

    const finishedAt = {ok: 0, bad: 0}
    const waiting = Promise.all([
      podctl(['status', 'ok-job', '-n', ns, '--wait-for', 'completed', '--wait-timeout', '60s', '-o', 'json'], {env}).finally(
        () => (finishedAt.ok = Date.now()),
      ),
      podctl(['status', 'bad-job', '-n', ns, '--wait-for', 'completed', '--wait-timeout', '60s'], {env}).finally(
        () => (finishedAt.bad = Date.now()),
      ),
    ])
    // Only how much of the wait is exercised depends on this pause, never the outcome.
    await new Promise((resolve) => {
      setTimeout(resolve, 1500)
    })
    const releasedAt = Date.now()
    for (const pod of [okPod, badPod])
      await client.runtime('execSync', {containerId: pod.containerIds.job, cmd: ['touch', '/tmp/go'], timeout: '10'})
    const [ok, bad] = await waiting
    expect(finishedAt.ok).toBeGreaterThanOrEqual(releasedAt)
    expect(finishedAt.bad).toBeGreaterThanOrEqual(releasedAt)
    expect(ok.code).toBe(0)
    expect(JSON.parse(ok.stdout)).toMatchObject({phase: 'Succeeded', containers: [{name: 'job', state: 'Exited', exitCode: 0}]})
    expect(bad.code).toBe(14)
    expect(bad.stdout).toContain('Phase:          Failed')
    expect(bad.stderr).toBe(`Error: pod bad-job_${ns} failed: container job exited with code 3 (Error)\n`)
  })

  it('with restartPolicy Always an exited container keeps the pod Running (the kubelet would restart it)', async () => {
    const pod = await createTestPod(client, {name: 'always', namespace: ns, containers: [{name: 'job', script: 'exit 3'}]})
    await waitForExit(client, pod.containerIds.job)
    const run = await podctl(['status', 'always', '-n', ns, '-o', 'json'], {env})
    expect(JSON.parse(run.stdout)).toMatchObject({phase: 'Running', ready: false, restartPolicy: 'Always'})
  })

  it('--wait-for times out with exit 4 and says what state the pod is in', async () => {
    await createTestPod(client, {name: 'idle', namespace: ns, containers: [{name: 'app', script: TRAPS_TERM, createOnly: true}]})
    const run = await podctl(['status', 'idle', '-n', ns, '--wait-for', 'running', '--wait-timeout', '1500ms'], {env})
    expect(run.code).toBe(4)
    expect(run.ms).toBeGreaterThanOrEqual(1500)
    expect(run.stdout).toBe('')
    expect(run.stderr).toBe(`Error: pod idle_${ns} is not running after 1.5s: phase Pending, sandbox Ready; containers: app Created\n`)
  })

  it('--wait-for running fails fast (exit 14) on a pod that failed', async () => {
    const pod = await createTestPod(client, {
      name: 'crashed',
      namespace: ns,
      restartPolicy: 'Never',
      containers: [{name: 'app', script: 'exit 2'}],
    })
    await waitForExit(client, pod.containerIds.app)
    const run = await podctl(['status', 'crashed', '-n', ns, '--wait-for', 'ready', '--wait-timeout', '30s'], {env})
    expect(run.code).toBe(14)
    expect(run.ms).toBeLessThan(10_000)
    expect(run.stderr).toMatch(/container app exited with code 2.*will not become ready/)
  })

  it('--wait-for deleted returns once the pod is killed; a stopped pod is terminal', async () => {
    const pod = await createTestPod(client, {name: 'doomed', namespace: ns, containers: [{name: 'app', script: TRAPS_TERM}]})
    const waiting = podctl(['status', 'doomed', '-n', ns, '--wait-for', 'deleted', '--wait-timeout', '60s'], {env})
    await new Promise((resolve) => {
      setTimeout(resolve, 1000)
    })

    const kept = await podctl(['kill', 'doomed', '-n', ns, '--keep'], {env})
    expect(kept.code).toBe(0)
    // Stopped sandbox, container ended by SIGTERM's trap with exit 0: nothing will restart it.
    const stopped = JSON.parse((await podctl(['status', 'doomed', '-n', ns, '-o', 'json'], {env})).stdout)
    expect(stopped).toMatchObject({phase: 'Succeeded', ip: null, ips: [], ready: false, sandboxes: [{state: 'NotReady'}]})

    const killed = await podctl(['kill', 'doomed', '-n', ns], {env})
    expect(killed.code).toBe(0)
    const done = await waiting
    expect(done.code).toBe(0)
    expect(done.stdout).toBe(`pod doomed_${ns} is gone\n`)
    expect(await leftovers(client, pod.uid)).toEqual({sandboxes: [], containers: []})

    const again = await podctl(['status', 'doomed', '-n', ns, '--wait-for', 'deleted', '-o', 'json'], {env})
    expect(again.code).toBe(0)
    expect(JSON.parse(again.stdout)).toEqual({pod: 'doomed', deleted: true})
  })

  it('an unknown pod exits 5', async () => {
    const run = await podctl(['status', 'ghost', '-n', ns], {env})
    expect(run.code).toBe(5)
    expect(run.stderr).toMatch(/^Error: pod "ghost" not found in namespace/)
    const waiting = await podctl(['status', 'ghost', '-n', ns, '--wait-for', 'running'], {env})
    expect(waiting.code).toBe(5)
  })

  it('without POD it is still the runtime status; pod flags need a POD', async () => {
    const run = await podctl(['status', '-o', 'json'], {env})
    expect(run.code).toBe(0)
    expect(JSON.parse(run.stdout)).toMatchObject({runtime: {name: 'containerd'}, ready: true})
    const bad = await podctl(['status', '--wait-for', 'ready'], {env})
    expect(bad.code).toBe(2)
    expect(bad.stderr).toMatch(/--wait-for needs a POD/)
  })
})
