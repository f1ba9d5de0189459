import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {setTimeout as sleep} from 'node:timers/promises'

import {afterAll, describe, expect, it} from 'vitest'

import {cleanupNamespace, lab, labClient, labEnv, sandboxesIn, uniqueNamespace} from '../support/lab.js'
import {podctl} from '../support/podctl.js'

/**
 * Sidecars (init containers with restartPolicy Always) against the lab: started in order and not
 * waited on, running beside the app container, stopped after it, and restarted by `podctl sync`.
 */
const client = labClient()
const namespace = uniqueNamespace('e2e-sidecars')
const work = mkdtempSync(join(tmpdir(), 'podctl-sidecars-'))
const env = labEnv({
  PODCTL_POD_LOGS_ROOT: join(work, 'logs'),
  PODCTL_POD_DIR_ROOT: join(work, 'pods'),
  PODCTL_BACKOFF_BASE_MS: '500',
})
const busybox = lab().busybox

/** Ignores SIGTERM: only the SIGKILL at the end of its stop timeout ends it. */
const IGNORES_TERM = "trap '' TERM; while true; do sleep 1; done"

// The sidecar appends to the shared log until /shared/stop exists; busybox sh as PID 1 ignores SIGTERM,
// so every container is only stopped by the SIGKILL at the end of its stop timeout: the kill order shows in finishedAt.
const SIDECAR = 'while [ ! -f /shared/stop ]; do date >> /shared/log; sleep 1; done'
const manifest = (name: string) => `
apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: ${namespace}}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 2
  volumes: [{name: shared, emptyDir: {}}]
  initContainers:
  - name: logger
    image: ${busybox}
    restartPolicy: Always
    command: [sh, -c, ${JSON.stringify(SIDECAR)}]
    startupProbe: {exec: {command: [test, -s, /shared/log]}, periodSeconds: 1}
    volumeMounts: [{name: shared, mountPath: /shared}]
  - name: setup
    image: ${busybox}
    command: [sh, -c, 'until [ -s /shared/log ]; do sleep 0.2; done']
    volumeMounts: [{name: shared, mountPath: /shared}]
  containers:
  - name: app
    image: ${busybox}
    command: [sh, -c, 'while true; do cat /shared/log > /dev/null; sleep 1; done']
    volumeMounts: [{name: shared, mountPath: /shared}]
`

interface Listed {
  id: string
  metadata: {name: string; attempt: number}
  state: string
}

async function listed(pod: string): Promise<Listed[]> {
  const ps = await podctl(['ps', '-a', '-n', namespace, '--pod', pod, '-o', 'json'], {env})
  expect(ps.code, ps.stderr).toBe(0)
  return JSON.parse(ps.stdout).containers
}

async function inspect(pod: string, container: string) {
  const result = await podctl(['inspect', '-n', namespace, `${pod}/${container}`], {env})
  expect(result.code, result.stderr).toBe(0)
  return JSON.parse(result.stdout)
}

/** Polls until check passes or the deadline ends (then the last failure is thrown). */
async function eventually(check: () => Promise<void>, ms = 30_000): Promise<void> {
  const end = Date.now() + ms
  for (;;) {
    try {
      await check()
      return
    } catch (error) {
      if (Date.now() > end) throw error
      await sleep(200)
    }
  }
}

afterAll(async () => {
  await cleanupNamespace(client, namespace)
  expect(await sandboxesIn(client, namespace)).toEqual([])
  client.close()
  rmSync(work, {recursive: true, force: true})
})

describe('sidecar init containers', () => {
  it('run starts the sidecar, then the init container while it runs, then the app beside it', async () => {
    const result = await podctl(['run', '-f', '-', '--timeout', '60s', '-o', 'json'], {env, input: manifest('web')})
    expect(result.code, result.stderr).toBe(0)
    expect(JSON.parse(result.stdout).pods[0].phase).toBe('Running')
    const containers = await listed('web')
    const state = Object.fromEntries(containers.map((c) => [c.metadata.name, c.state]))
    expect(state).toEqual({logger: 'CONTAINER_RUNNING', setup: 'CONTAINER_EXITED', app: 'CONTAINER_RUNNING'})
    expect(containers.find((c) => c.metadata.name === 'logger')!.metadata.attempt).toBe(0)

    const setup = await inspect('web', 'setup')
    expect(setup.status.exitCode).toBe(0)
    const logger = await inspect('web', 'logger')
    expect(logger.status.annotations).toMatchObject({
      'io.podctl.containerType': 'init',
      'io.podctl.sidecar': '0',
    })
    // The sidecar started before the init container that waited for its log, and is still writing.
    expect(Date.parse(logger.status.startedAt)).toBeLessThanOrEqual(Date.parse(setup.status.startedAt))
    const read = await podctl(['exec', '-n', namespace, 'web/app', '--', 'cat', '/shared/log'], {env})
    expect(read.code, read.stderr).toBe(0)
    expect(read.stdout.trim().split('\n').length).toBeGreaterThanOrEqual(1)
  })

  it('--dry-run notes that the sidecar is not waited on', async () => {
    const result = await podctl(['run', '-f', '-', '--dry-run', '-o', 'json'], {env, input: manifest('plan')})
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toContain(
      'sidecar (restartPolicy Always): not waited on to complete; the next container starts once its startupProbe succeeds',
    )
  })

  it('podctl sync restarts a sidecar that exited, whatever the pod restartPolicy', async () => {
    const stop = await podctl(['exec', '-n', namespace, 'web/app', '--', 'touch', '/shared/stop'], {env})
    expect(stop.code, stop.stderr).toBe(0)
    await eventually(async () => {
      const logger = (await listed('web')).find((c) => c.metadata.name === 'logger')!
      expect(logger.state).toBe('CONTAINER_EXITED')
    })
    const clear = await podctl(['exec', '-n', namespace, 'web/app', '--', 'rm', '/shared/stop'], {env})
    expect(clear.code, clear.stderr).toBe(0)
    await eventually(async () => {
      const sync = await podctl(['sync', 'web', '-n', namespace], {env})
      expect(sync.code, sync.stderr).toBe(0)
      const running = (await listed('web')).filter((c) => c.metadata.name === 'logger' && c.state === 'CONTAINER_RUNNING')
      expect(running.map((c) => c.metadata.attempt)).toEqual([1])
    })
    const app = (await listed('web')).filter((c) => c.metadata.name === 'app')
    expect(app.map((c) => [c.metadata.attempt, c.state])).toEqual([[0, 'CONTAINER_RUNNING']])
  })

  it('kill stops the app container first and the sidecar after it, and leaves nothing', async () => {
    const kept = await podctl(['kill', 'web', '-n', namespace, '--keep'], {env})
    expect(kept.code, kept.stderr).toBe(0)
    const app = await inspect('web', 'app')
    const logger = await inspect('web', 'logger')
    const appFinished = Date.parse(app.status.finishedAt)
    const loggerFinished = Date.parse(logger.status.finishedAt)
    // SIGTERM ignored: the app takes its whole 2 s grace period; the sidecar waits for it within that
    // same grace period, then gets the kubelet's 2 s minimum, so it stops about 2 s after the app.
    expect(loggerFinished - appFinished).toBeGreaterThanOrEqual(1500)

    const removed = await podctl(['kill', 'web', '-n', namespace], {env})
    expect(removed.code, removed.stderr).toBe(0)
    expect(await sandboxesIn(client, namespace)).toEqual([])
  })

  it('kill stops a pod whose app and sidecar both ignore SIGTERM within one grace period, not two', async () => {
    // terminationGracePeriodSeconds 10: the app takes all of it (SIGKILL at 10 s); the sidecar waits for
    // the app within the same grace period, then gets the kubelet's 2 s minimum: about 12 s, not 20 s.
    const stubborn = `
apiVersion: v1
kind: Pod
metadata: {name: stubborn, namespace: ${namespace}}
spec:
  terminationGracePeriodSeconds: 10
  initContainers:
  - name: proxy
    image: ${busybox}
    restartPolicy: Always
    command: [sh, -c, ${JSON.stringify(IGNORES_TERM)}]
  containers:
  - name: app
    image: ${busybox}
    command: [sh, -c, ${JSON.stringify(IGNORES_TERM)}]
`
    const run = await podctl(['run', '-f', '-', '--timeout', '60s', '-o', 'json'], {env, input: stubborn})
    expect(run.code, run.stderr).toBe(0)
    const running = (await listed('stubborn')).filter((c) => c.state === 'CONTAINER_RUNNING').map((c) => c.metadata.name)
    expect(running.sort()).toEqual(['app', 'proxy'])

    const started = performance.now()
    const kill = await podctl(['kill', 'stubborn', '-n', namespace, '-o', 'json'], {env})
    const tookMs = performance.now() - started
    expect(kill.code, kill.stderr).toBe(0)
    expect(JSON.parse(kill.stdout).items[0]).toMatchObject({containersStopped: 2, removed: true})
    // The grace period was honoured (the app was not killed early) ...
    expect(tookMs, `kill took ${Math.round(tookMs)} ms`).toBeGreaterThanOrEqual(9500)
    // ... once: 10 s + the 2 s left to the sidecar, with room for the runtime on a loaded machine, below the 20 s of two.
    expect(tookMs, `kill took ${Math.round(tookMs)} ms`).toBeLessThanOrEqual(17_000)
    expect(await sandboxesIn(client, namespace)).toEqual([])
  })
})
