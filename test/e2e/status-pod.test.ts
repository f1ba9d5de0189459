import {existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {cleanupNamespace, lab, labClient, labEnv, podAddressPattern, sandboxesIn, uniqueNamespace} from '../support/lab.js'
import {podctl} from '../support/podctl.js'
import {createTestPod, leftovers, pullBusybox, waitForExit} from '../support/pods.js'
import {until as untilWithin} from '../support/until.js'

const client = labClient()
const ns = uniqueNamespace('status')
const env = labEnv()
/** Exits 0 on SIGTERM, within a second. */
const TRAPS_TERM = 'trap "exit 0" TERM; while true; do sleep 1; done'
/** Pods podctl runs and syncs (pod.json, backoff.json, status.json), with a crash back-off of a minute. */
const work = mkdtempSync(join(tmpdir(), 'podctl-status-pod-'))
const managed = labEnv({
  PODCTL_POD_LOGS_ROOT: join(work, 'logs'),
  PODCTL_POD_DIR_ROOT: join(work, 'pods'),
  PODCTL_CONTAINER_LOGS_DIR: join(work, 'links'),
  PODCTL_BACKOFF_BASE_MS: '60000',
})

beforeAll(async () => {
  await pullBusybox(client)
})

afterAll(async () => {
  await cleanupNamespace(client, ns)
  expect(await sandboxesIn(client, ns)).toEqual([])
  client.close()
  rmSync(work, {recursive: true, force: true})
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
      ip: expect.stringMatching(new RegExp(`^${podAddressPattern()}$`)),
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
    expect(JSON.parse(run.stdout)).toMatchObject({runtime: {name: lab().runtimeName}, ready: true})
    const bad = await podctl(['status', '--wait-for', 'ready'], {env})
    expect(bad.code).toBe(2)
    expect(bad.stderr).toMatch(/--wait-for needs a POD/)
  })
})

function manifest(name: string, spec: string): string {
  const path = join(work, `${name}.yaml`)
  const head = `apiVersion: v1\nkind: Pod\nmetadata: {name: ${name}, namespace: ${ns}}\nspec:\n  terminationGracePeriodSeconds: 2\n`
  writeFileSync(path, head + spec.replaceAll('BUSYBOX', lab().busybox))
  return path
}

async function statusJson(pod: string) {
  const result = await podctl(['status', pod, '-n', ns, '-o', 'json'], {env: managed})
  expect(result.code, result.stderr).toBe(0)
  return JSON.parse(result.stdout)
}

/** Polls every 200 ms, at most 30 s, until `check` returns a value. */
function until<T>(what: string, check: () => Promise<T | undefined> | T | undefined): Promise<T> {
  return untilWithin(what, check, {timeoutMs: 30_000, pollMs: 200})
}

describe('podctl status POD: the status manager', () => {
  it('a crash-looping container waits in CrashLoopBackOff (table and JSON), its last state the attempt that just exited', async () => {
    const path = manifest(
      'crash',
      `  initContainers:
  - {name: setup, image: BUSYBOX, command: [sh, -c, "exit 0"]}
  containers:
  - {name: c, image: BUSYBOX, command: [sh, -c, "sleep 0.3; exit 3"]}
`,
    )
    expect((await podctl(['run', '-f', path, '-q', '--wait', 'none'], {env: managed})).code).toBe(0)
    const exited = (attempt: number) => async () => {
      const report = await statusJson('crash')
      const newest = report.containers.find((c: {name: string}) => c.name === 'c')
      return newest?.attempt === attempt && newest.state === 'Exited' ? report : undefined
    }

    await until('attempt 0 to exit', exited(0))
    // The first restart is immediate and opens the first window (a minute here); attempt 1 exits inside it.
    const sync = await podctl(['sync', 'crash', '-n', ns], {env: managed})
    expect(sync.stdout).toContain('started c (restart 1)')
    const report = await until('attempt 1 to exit', exited(1))
    const newest = report.containers.find((c: {name: string}) => c.name === 'c')
    expect(report).toMatchObject({phase: 'Running', ready: false})
    const c = report.containerStatuses.find((s: {name: string}) => s.name === 'c')
    expect(c).toMatchObject({
      state: 'Waiting',
      ready: false,
      restartCount: 1,
      waiting: {reason: 'CrashLoopBackOff', message: `back-off 1m0s restarting failed container=c pod=crash_${ns}(${report.uid})`},
      terminated: null,
      lastState: {containerId: newest.id, exitCode: 3, reason: 'Error', startedAt: newest.startedAt, finishedAt: newest.finishedAt},
    })
    expect(Date.parse(c.waiting.backOffUntil)).toBe(Date.parse(newest.finishedAt) + 60_000)
    expect(c.waiting.backOffRemainingMs).toBeGreaterThan(0)
    expect(c.waiting.backOffRemainingMs).toBeLessThanOrEqual(60_000)
    expect(report.containerStatuses.find((s: {name: string}) => s.name === 'setup')).toMatchObject({
      state: 'Exited',
      waiting: null,
      terminated: {exitCode: 0, reason: 'Completed'},
    })

    const table = await podctl(['status', 'crash', '-n', ns], {env: managed})
    expect(table.code).toBe(0)
    expect(table.stdout).toMatch(/^Phase:\s+Running$/m)
    const lines = table.stdout.split('\n')
    expect(lines.find((line) => line.startsWith('NAME'))).toMatch(/^NAME\s+STATE\s+READY\s+STARTED\s+RESTARTS\s+LAST STATE\s+MESSAGE$/)
    expect(lines.find((line) => line.startsWith('setup '))).toMatch(/^setup\s+Terminated: Completed \(exit 0\)\s+true\s+false\s+0\s+-\s+-$/)
    expect(lines.find((line) => line.startsWith('c '))).toMatch(
      new RegExp(
        String.raw`^c\s+Waiting: CrashLoopBackOff \((\d+|1m0)s left\)\s+false\s+false\s+1\s+Error \(exit 3\) at ${newest.finishedAt}\s+` +
          String.raw`back-off 1m0s restarting failed container=c pod=crash_${ns}\(${report.uid}\)$`,
      ),
    )

    // Under sync --watch a restart is refused on every pass of its window: one BackOff for it, and status.json records it.
    let stdout = ''
    const recordPath = join(work, 'pods', report.uid, 'status.json')
    const recorded = async () => {
      await until('a BackOff event', () => (/BackOff/.test(stdout) ? true : undefined))
      const record = await until('the supervisor to record the back-off', () => {
        const text = existsSync(recordPath) ? readFileSync(recordPath, 'utf8') : '{}'
        return JSON.parse(text).containers?.c?.waiting ? JSON.parse(text) : undefined
      })
      // A few more passes (the supervisor looks again within a second or two); how many never changes the count.
      await new Promise((resolve) => {
        setTimeout(resolve, 4000)
      })
      return record
    }

    let record: ReturnType<typeof recorded> | undefined
    const watch = await podctl(['sync', '--watch', 'crash', '-n', ns], {
      env: managed,
      timeoutMs: 60_000,
      onSpawn(child) {
        child.stdout?.on('data', (chunk) => {
          stdout += chunk
        })
        record = recorded().finally(() => child.kill('SIGINT'))
      },
    })
    expect(watch.code, watch.stderr).toBe(0)
    expect(stdout.match(/Warning\s+BackOff\s.*Back-off restarting failed container c in pod crash_/g)).toHaveLength(1)
    expect((await record!).containers.c).toEqual({
      ready: false,
      started: false,
      waiting: {reason: 'CrashLoopBackOff', message: c.waiting.message, backOffUntil: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/)},
    })
  })

  it('ready is false while the readiness probe fails (the supervisor probes), true once it passes', async () => {
    const path = manifest(
      'probed',
      `  containers:
  - name: c
    image: BUSYBOX
    command: [sh, -c, '${TRAPS_TERM}']
    readinessProbe:
      exec: {command: [cat, /tmp/ready]}
      periodSeconds: 1
`,
    )
    expect((await podctl(['run', '-f', path, '-q', '--settle', '0'], {env: managed})).code).toBe(0)
    let stdout = ''
    // While the supervisor runs: the status once a readiness probe has failed, then once it passed.
    const observe = async () => {
      await until('a failed readiness probe', () => (/Warning\s+Unhealthy\s.*Readiness probe failed/.test(stdout) ? true : undefined))
      const unready = await until('the supervisor', async () => {
        const report = await statusJson('probed')
        return report.supervised ? report : undefined
      })
      const table = (await podctl(['status', 'probed', '-n', ns], {env: managed})).stdout
      await client.runtime('execSync', {containerId: unready.containers[0].id, cmd: ['touch', '/tmp/ready'], timeout: '10'})
      const ready = await until('the probe to pass', async () => {
        const report = await statusJson('probed')
        return report.ready ? report : undefined
      })
      const readyTable = (await podctl(['status', 'probed', '-n', ns], {env: managed})).stdout
      return {unready, table, ready, readyTable}
    }

    let seen: ReturnType<typeof observe> | undefined
    const watch = await podctl(['sync', '--watch', 'probed', '-n', ns], {
      env: managed,
      timeoutMs: 90_000,
      onSpawn(child) {
        child.stdout?.on('data', (chunk) => {
          stdout += chunk
        })
        seen = observe().finally(() => child.kill('SIGINT'))
      },
    })
    expect(watch.code, watch.stderr).toBe(0)
    const {unready, table, ready, readyTable} = await seen!
    // Running, its container running: but not ready, since the probe fails.
    expect(unready).toMatchObject({phase: 'Running', ready: false, containers: [{name: 'c', state: 'Running'}]})
    expect(unready.containerStatuses).toEqual([expect.objectContaining({name: 'c', state: 'Running', ready: false, started: true})])
    expect(unready.conditions).toEqual([
      {type: 'PodScheduled', status: true},
      {type: 'Initialized', status: true},
      {type: 'ContainersReady', status: false},
      {type: 'Ready', status: false},
    ])
    expect(table).toMatch(/^Phase:\s+Running$/m)
    expect(table).toContain('Conditions: PodScheduled=True  Initialized=True  ContainersReady=False  Ready=False (supervised)')
    expect(ready.conditions).toContainEqual({type: 'Ready', status: true})
    expect(ready.containerStatuses).toEqual([expect.objectContaining({name: 'c', ready: true})])
    expect(readyTable).toMatch(/^Phase:\s+Running \(ready\)$/m)
  })
})
