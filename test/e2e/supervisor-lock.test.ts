import type {ChildProcess} from 'node:child_process'
import {existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {cleanupNamespace, lab, labClient, labEnv, sandboxesIn, uniqueNamespace} from '../support/lab.js'
import {podctl, type RunResult} from '../support/podctl.js'
import {pullBusybox} from '../support/pods.js'

/**
 * One supervisor per pod against the lab: a second `sync --watch` on a pod the first supervises
 * warns once (AlreadySupervised, naming the first's pid) and leaves the pod alone; when the first
 * stops it takes over (TookOver); when both have stopped no supervisor.lock is left.
 */
const client = labClient()
const namespace = uniqueNamespace('suplock')
const work = mkdtempSync(join(tmpdir(), 'podctl-suplock-'))
const podDirRoot = join(work, 'pods')
const env = labEnv({
  PODCTL_POD_LOGS_ROOT: join(work, 'logs'),
  PODCTL_POD_DIR_ROOT: podDirRoot,
  PODCTL_CONTAINER_LOGS_DIR: join(work, 'links'),
  PODCTL_BACKOFF_BASE_MS: '1000',
})
const watchers: ChildProcess[] = []

beforeAll(async () => {
  await pullBusybox(client)
})

afterAll(async () => {
  for (const child of watchers) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  await cleanupNamespace(client, namespace)
  expect(await sandboxesIn(client, namespace)).toEqual([])
  client.close()
  rmSync(work, {recursive: true, force: true})
})

interface Watcher {
  pid: number
  stdout: () => string
  stop: (signal?: NodeJS.Signals) => Promise<RunResult>
}

function manifest(name: string, command: string): string {
  const path = join(work, `${name}.yaml`)
  writeFileSync(
    path,
    `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: ${namespace}}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: c
    image: ${lab().busybox}
    command: [sh, -c, "${command}"]
`,
  )
  return path
}

function watch(pod: string): Watcher {
  let child: ChildProcess | undefined
  let stdout = ''
  const done = podctl(['sync', '--watch', pod, '-n', namespace], {
    env,
    timeoutMs: 100_000,
    onSpawn(spawned) {
      child = spawned
      watchers.push(spawned)
      spawned.stdout?.on('data', (chunk) => (stdout += chunk))
    },
  })
  return {
    pid: child!.pid!,
    stdout: () => stdout,
    async stop(signal: NodeJS.Signals = 'SIGINT') {
      child!.kill(signal)
      return done
    },
  }
}

async function until<T>(what: string, check: () => T | undefined | false, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = check()
    if (value) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => {
      setTimeout(resolve, 100)
    })
  }
}

function lockHolder(uid: string): number | undefined {
  try {
    return JSON.parse(readFileSync(join(podDirRoot, uid, 'supervisor.lock'), 'utf8')).pid
  } catch {
    return undefined
  }
}

function statusSupervisor(uid: string): number | undefined {
  try {
    return JSON.parse(readFileSync(join(podDirRoot, uid, 'status.json'), 'utf8')).supervisor?.pid
  } catch {
    return undefined
  }
}

const starts = (text: string) => (text.match(/Started\s+container c/g) ?? []).length

describe('sync --watch: one supervisor per pod', () => {
  it('a second supervisor warns, leaves the pod alone, and takes over when the first stops', async () => {
    const path = manifest('held', 'sleep 2; exit 1')
    const run = await podctl(['run', '-f', path, '-q', '--settle', '0'], {env})
    expect(run.code, run.stderr).toBe(0)
    const uid = JSON.parse((await podctl(['status', 'held', '-n', namespace, '-o', 'json'], {env})).stdout).uid as string
    const object = `held_${namespace}`

    const first = watch('held')
    await until('the first supervisor to take the lock', () => lockHolder(uid) === first.pid)
    expect(statSync(join(podDirRoot, uid, 'supervisor.lock')).mode & 0o777).toBe(0o600)

    const second = watch('held')
    const warning = new RegExp(
      `Warning\\s+AlreadySupervised\\s.*${object}\\s+Pod is supervised by pid ${first.pid} \\(podctl sync --watch\\) ` +
        String.raw`since \d{4}-\d\d-\d\dT\S+; podctl leaves it, and every other pod that process supervises, to that process ` +
        'and takes over when it stops',
    )
    await until('the AlreadySupervised warning', () => warning.test(second.stdout()))
    // The first keeps restarting the crashing container while the second watches and does nothing.
    const before = starts(first.stdout())
    await until('the first supervisor to restart the container', () => starts(first.stdout()) > before, 60_000)
    expect(second.stdout().match(/AlreadySupervised/g)).toHaveLength(1)
    // Its only pod is held: it says once that it waits as a standby.
    const standby = /Normal\s+Standby\s.*Every selected pod is supervised by another process; waiting to take over when it stops/
    await until('the Standby event', () => standby.test(second.stdout()))
    expect(second.stdout().match(new RegExp(standby.source, 'g'))).toHaveLength(1)
    expect(second.stdout()).not.toMatch(/Started|Killing|Created|BackOff|FailedSync/)
    expect(lockHolder(uid)).toBe(first.pid)

    const status = await podctl(['status', 'held', '-n', namespace, '-o', 'json'], {env})
    expect(JSON.parse(status.stdout)).toMatchObject({supervised: true, supervisor: {pid: first.pid, holder: 'podctl sync --watch'}})
    const human = await podctl(['status', 'held', '-n', namespace], {env})
    expect(human.stdout).toMatch(new RegExp(`Supervised by pid ${first.pid} \\(podctl sync --watch\\) since \\d{4}-`))

    const stopped = await first.stop()
    expect(stopped.code, stopped.stderr).toBe(0)
    await until('the second supervisor to take over', () =>
      new RegExp(
        `Normal\\s+TookOver\\s.*${object}\\s+pid ${first.pid} \\(podctl sync --watch\\) ` +
          'no longer supervises the pod; podctl supervises it now',
      ).test(second.stdout()),
    )
    expect(lockHolder(uid)).toBe(second.pid)
    await until(
      'the second supervisor to restart the container',
      () => starts(second.stdout().slice(second.stdout().indexOf('TookOver'))) > 0,
      60_000,
    )

    const last = await second.stop()
    expect(last.code, last.stderr).toBe(0)
    expect(existsSync(join(podDirRoot, uid, 'supervisor.lock'))).toBe(false)
    const afterStop = JSON.parse((await podctl(['status', 'held', '-n', namespace, '-o', 'json'], {env})).stdout)
    expect(afterStop).toMatchObject({supervised: false, supervisor: null})

    expect((await podctl(['kill', 'held', '-n', namespace, '--force'], {env})).code).toBe(0)
    expect(await sandboxesIn(client, namespace)).toEqual([])
    const dirs = existsSync(podDirRoot) ? readdirSync(podDirRoot).filter((name) => !name.startsWith('.')) : []
    expect(dirs).toEqual([])
  })

  it('takes over the lock of a supervisor that was killed (SIGKILL) without a warning', async () => {
    const path = manifest('orphan', "trap 'exit 0' TERM; while true; do sleep 1; done")
    const run = await podctl(['run', '-f', path, '-q'], {env})
    expect(run.code, run.stderr).toBe(0)
    const uid = JSON.parse((await podctl(['status', 'orphan', '-n', namespace, '-o', 'json'], {env})).stdout).uid as string
    const killed = watch('orphan')
    await until('the first supervisor to take the lock', () => lockHolder(uid) === killed.pid)
    expect((await killed.stop('SIGKILL')).code).toBeNull()
    // The dead supervisor's lock is left behind, with its pid.
    expect(lockHolder(uid)).toBe(killed.pid)
    const next = watch('orphan')
    await until('the next supervisor to take the stale lock', () => lockHolder(uid) === next.pid)
    // It supervises the pod: its first sync records its pid in status.json.
    await until('the next supervisor to record the pod', () => statusSupervisor(uid) === next.pid)
    expect(next.stdout()).not.toMatch(/AlreadySupervised|TookOver|Standby/)
    const stopped = await next.stop('SIGTERM')
    expect(stopped.code, stopped.stderr).toBe(0)
    expect(existsSync(join(podDirRoot, uid, 'supervisor.lock'))).toBe(false)
    expect((await podctl(['kill', 'orphan', '-n', namespace, '--force'], {env})).code).toBe(0)
    expect(await sandboxesIn(client, namespace)).toEqual([])
  })

  it.each(['SIGHUP', 'SIGTERM'] as const)(
    '%s stops a supervisor cleanly: exit 0, its lock released, the pod left running',
    async (signal) => {
      const name = `hangup-${signal.toLowerCase()}`
      const run = await podctl(['run', '-f', manifest(name, "trap 'exit 0' TERM; while true; do sleep 1; done"), '-q'], {env})
      expect(run.code, run.stderr).toBe(0)
      const uid = JSON.parse((await podctl(['status', name, '-n', namespace, '-o', 'json'], {env})).stdout).uid as string
      const supervisor = watch(name)
      await until('the supervisor to record the pod', () => statusSupervisor(uid) === supervisor.pid)
      const stopped = await supervisor.stop(signal)
      expect(stopped.code, stopped.stderr).toBe(0)
      expect(stopped.stderr).toBe('Interrupted: finishing the step in flight\n')
      expect(stopped.stdout).toContain('the pods keep running')
      expect(existsSync(join(podDirRoot, uid, 'supervisor.lock'))).toBe(false)
      const status = JSON.parse((await podctl(['status', name, '-n', namespace, '-o', 'json'], {env})).stdout)
      expect(status).toMatchObject({phase: 'Running', supervised: false})
      expect((await podctl(['kill', name, '-n', namespace], {env})).code).toBe(0)
    },
  )

  it('run --supervise holds its pods until they are killed: a waiting sync --watch never takes over a pod being killed', async () => {
    const path = manifest('owned', "trap 'exit 0' TERM; while true; do sleep 1; done")
    let owner: ChildProcess | undefined
    let ownerOut = ''
    const running = podctl(['run', '-f', path, '--supervise', '--settle', '0'], {
      env,
      timeoutMs: 100_000,
      onSpawn(child) {
        owner = child
        watchers.push(child)
        child.stdout?.on('data', (chunk) => (ownerOut += chunk))
      },
    })
    await until('run --supervise to supervise its pod', () => /Watching pods/.test(ownerOut))
    const uid = JSON.parse((await podctl(['status', 'owned', '-n', namespace, '-o', 'json'], {env})).stdout).uid as string
    await until('run --supervise to take the lock', () => lockHolder(uid) === owner!.pid)
    const waiting = watch('owned')
    await until('the AlreadySupervised warning', () =>
      new RegExp(`AlreadySupervised\\s.*Pod is supervised by pid ${owner!.pid} \\(podctl run --supervise\\)`).test(waiting.stdout()),
    )
    owner!.kill('SIGINT')
    const run = await running
    expect(run.code, run.stderr).toBe(0)
    expect(ownerOut).toContain('killing the supervised pods')
    expect(await sandboxesIn(client, namespace)).toEqual([])
    // Give the waiting supervisor a few turns (it lists every second): the killed pod stays gone.
    await new Promise((resolve) => {
      setTimeout(resolve, 2500)
    })
    const stopped = await waiting.stop()
    expect(stopped.code, stopped.stderr).toBe(0)
    expect(waiting.stdout()).not.toMatch(/TookOver|Started|Created/)
    expect(await sandboxesIn(client, namespace)).toEqual([])
    expect(existsSync(join(podDirRoot, uid))).toBe(false)
  })
})
