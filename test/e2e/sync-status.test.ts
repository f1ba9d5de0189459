import {existsSync, lstatSync, mkdtempSync, readdirSync, readlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {lab, labClient, labEnv, uniqueNamespace} from '../support/lab.js'
import {podctl} from '../support/podctl.js'
import {useLabNamespace} from '../support/lab-namespace.js'

/**
 * The status manager and the node housekeeping against the lab: `status` on an unsupervised dead
 * container, the termination message (file and FallbackToLogsOnError), the /var/log/containers
 * links, and `sync --watch` restarting a container within seconds and ending cleanly on Ctrl-C.
 */
const client = labClient()
const namespace = uniqueNamespace('syncst')
const work = mkdtempSync(join(tmpdir(), 'podctl-sync-status-'))
const links = join(work, 'links')
const env = labEnv({
  PODCTL_POD_LOGS_ROOT: join(work, 'logs'),
  PODCTL_POD_DIR_ROOT: join(work, 'pods'),
  PODCTL_CONTAINER_LOGS_DIR: links,
  PODCTL_BACKOFF_BASE_MS: '1000',
})
const busybox = lab().busybox

function manifest(name: string, body: string): string {
  const path = join(work, `${name}.yaml`)
  const text = `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: ${namespace}}
spec:
  terminationGracePeriodSeconds: 2
  containers:
${body.replaceAll('BUSYBOX', busybox)}`
  writeFileSync(path, text)
  return path
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    const value = await probe()
    if (value !== undefined) return value
    await new Promise((resolve) => {
      setTimeout(resolve, 200)
    })
  }

  throw new Error(`timed out waiting for ${what}`)
}

interface Conditions {
  phase: string
  notice?: string
  supervised: boolean
  conditions: Array<{type: string; status: boolean}>
  containers: Array<{name: string; state: string; attempt: number}>
  containerStatuses: Array<{name: string; state: string; message: string; restartCount: number; lastState: {exitCode: number} | null}>
}

async function status(pod: string): Promise<Conditions> {
  const result = await podctl(['status', pod, '-n', namespace, '-o', 'json'], {env})
  expect(result.code, result.stderr).toBe(0)
  return JSON.parse(result.stdout)
}

useLabNamespace(client, namespace, work)

describe('status of a pod nothing supervises', () => {
  it('says plainly that an exited container will not be restarted, and shows the termination messages', async () => {
    const path = manifest(
      'dead',
      `  - name: c
    image: BUSYBOX
    command: [sh, -c, "echo bye > /dev/termination-log; sleep 0.5; exit 4"]
  - name: f
    image: BUSYBOX
    terminationMessagePolicy: FallbackToLogsOnError
    command: [sh, -c, "echo from-logs; sleep 0.5; exit 5"]
`,
    )
    expect((await podctl(['run', '-f', path, '-q', '--settle', '0'], {env})).code).toBe(0)
    const report = await waitFor('both containers to exit', async () => {
      const current = await status('dead')
      return current.containerStatuses.every((c) => c.state === 'Exited') ? current : undefined
    })
    expect(report.phase).toBe('Running')
    expect(report.supervised).toBe(false)
    expect(report.notice).toMatch(new RegExp(`^Running — not supervised: .*c exited 4 at \\d{4}-.*; run podctl sync dead -n ${namespace}$`))
    expect(report.notice).toContain('f exited 5 at')
    expect(report.containerStatuses.find((c) => c.name === 'c')?.message).toBe('bye\n')
    expect(report.containerStatuses.find((c) => c.name === 'f')?.message).toBe('from-logs\n')
    expect(report.conditions).toEqual([
      {type: 'PodScheduled', status: true},
      {type: 'Initialized', status: true},
      {type: 'ContainersReady', status: false},
      {type: 'Ready', status: false},
    ])
    const human = await podctl(['status', 'dead', '-n', namespace], {env})
    expect(human.stdout).toContain('Running — not supervised: ')
    expect(human.stdout).toContain('Conditions: PodScheduled=True  Initialized=True  ContainersReady=False  Ready=False')

    // After a sync the restarted container's last state keeps the exit code.
    expect((await podctl(['sync', 'dead', '-n', namespace], {env})).code).toBe(0)
    const synced = await status('dead')
    // It exits 4 again 0.5 s after it starts: a sync that took longer saw that and restarted it again (the first restarts are immediate).
    const restarted = synced.containerStatuses.find((c) => c.name === 'c')!
    expect(restarted.restartCount).toBeGreaterThanOrEqual(1)
    expect(restarted.lastState).toMatchObject({exitCode: 4})
  })

  it('after run --wait ready, says that Ready=False is because nothing probes the pod now', async () => {
    const path = manifest(
      'probed',
      `  - name: app
    image: BUSYBOX
    command: [sh, -c, "trap 'exit 0' TERM; while true; do sleep 1; done"]
    readinessProbe: {exec: {command: ["true"]}, periodSeconds: 1}
`,
    )
    expect((await podctl(['run', '-f', path, '-q', '--wait', 'ready'], {env})).code).toBe(0)
    const report = await status('probed')
    expect(report).toMatchObject({phase: 'Running', supervised: false})
    expect(report.conditions.find((c) => c.type === 'Ready')).toEqual({type: 'Ready', status: false})
    expect(report.notice).toBe(
      'Ready=False — not supervised: nothing probes app now, so it is not ready; ' +
        `podctl sync --watch probed -n ${namespace} runs the probes (podctl status probed -n ${namespace} --wait-for ready probes once)`,
    )
    const human = await podctl(['status', 'probed', '-n', namespace], {env})
    expect(human.stdout).toContain('Ready=False — not supervised: nothing probes app now')
    // Probed by status itself: ready, and nothing to explain.
    const waited = await podctl(['status', 'probed', '-n', namespace, '--wait-for', 'ready', '-o', 'json'], {env})
    expect(waited.code, waited.stderr).toBe(0)
    expect(JSON.parse(waited.stdout)).toMatchObject({ready: true, notice: null})
  })
})

describe('/var/log/containers links', () => {
  /** Runs pod `name` with one container, app, running `script`: the pod's result, the container's ID and its link. */
  async function runLinked(name: string, script: string) {
    const path = manifest(
      name,
      `  - name: app
    image: BUSYBOX
    command: [sh, -c, "${script}"]
`,
    )
    const run = await podctl(['run', '-f', path, '-q', '-o', 'json'], {env})
    expect(run.code).toBe(0)
    const [pod] = JSON.parse(run.stdout).pods
    const id: string = pod.containers[0].id
    const link = join(links, `${name}_${namespace}_app-${id}.log`)
    expect(lstatSync(link).isSymbolicLink()).toBe(true)
    return {pod, id, link}
  }

  it('links each container log while the container exists and removes the links with the pod', async () => {
    const {pod, link} = await runLinked('links', "echo hello; trap 'exit 0' TERM; while true; do sleep 1; done")
    expect(readlinkSync(link)).toBe(join(work, 'logs', `${namespace}_links_${pod.uid}`, 'app', '0.log'))
    expect((await podctl(['kill', 'links', '-n', namespace], {env})).code).toBe(0)
    expect(existsSync(link)).toBe(false)
    expect(readdirSync(links).filter((name) => name.startsWith(`links_${namespace}_`))).toEqual([])
  })

  it('rm of a container removes its link with its log file', async () => {
    const {id, link} = await runLinked('unlinked', 'echo hello; exec sleep 3600')
    const logFile = readlinkSync(link)
    expect(await podctl(['rm', '-f', id.slice(0, 12)], {env})).toMatchObject({code: 0, stdout: `${id}\n`})
    expect(existsSync(logFile), 'the log file').toBe(false)
    expect(lstatSync(link, {throwIfNoEntry: false}), 'the link').toBeUndefined()
    expect((await podctl(['kill', 'unlinked', '-n', namespace], {env})).code).toBe(0)
  })
})

describe('sync --watch', () => {
  it('restarts an exiting container within seconds and ends cleanly on Ctrl-C', async () => {
    const path = manifest(
      'watched',
      `  - name: c
    image: BUSYBOX
    command: [sh, -c, "sleep 1; exit 2"]
`,
    )
    expect((await podctl(['run', '-f', path, '-q', '--wait', 'none'], {env})).code).toBe(0)
    let stdout = ''
    let signalled = false
    const result = await podctl(['sync', '--watch', 'watched', '-n', namespace], {
      env,
      onSpawn(child) {
        child.stdout?.on('data', (chunk) => {
          stdout += chunk
          if (!signalled && (stdout.match(/Started container c/g) ?? []).length >= 2) {
            signalled = true
            child.kill('SIGINT')
          }
        })
      },
      timeoutMs: 60_000,
    })
    expect(result.code, result.stderr).toBe(0)
    expect(stdout).toContain('Watching pods')
    const report = await status('watched')
    expect(report.supervised).toBe(false)
    expect(Math.max(...report.containers.map((c) => c.attempt))).toBeGreaterThanOrEqual(2)
  })
})
