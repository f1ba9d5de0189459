import {spawn} from 'node:child_process'
import {mkdtempSync, readdirSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {once} from 'node:events'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {connect} from '../../src/lib/api/index.js'
import {pullBusybox} from '../support/containers.js'
import {cleanupNamespace, lab, labClient, sandboxesIn, uniqueNamespace} from '../support/lab.js'
import {startAgent} from '../support/agent.js'
import {BIN, podctl, ROOT} from '../support/podctl.js'
import {until} from '../support/until.js'

/**
 * Issue 36's reaper: a test process SIGKILLed after runPod leaves its pod; the next connect() on the
 * node kills it (reap: false keeps it), and a live session's pod stays; so do `podctl gc` (--dry-run
 * lists it) and a running supervisor's garbage collection.
 */
const client = labClient()
const namespace = uniqueNamespace('lib-reap')
const podDirRoot = mkdtempSync(join(tmpdir(), 'podctl-library-reaper-'))
const roots = {runtimeEndpoint: lab().endpoint, podLogsRoot: lab().logRoot, podDirRoot, env: {}}

function pod(name: string) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {name, namespace},
    spec: {containers: [{name: 'app', image: lab().busybox, command: ['sleep', '3600']}]},
  }
}

// The test process: runs a pod with the built library, says so, and waits to be killed.
const testProcess = (name: string) => `
const {connect} = await import(${JSON.stringify(join(ROOT, 'dist/lib/api/index.js'))})
const runtime = await connect(${JSON.stringify({...roots, reap: false})})
await runtime.runPod(${JSON.stringify(pod(name))})
console.log('running')
setInterval(() => {}, 60_000)
`

/** A pod `name` whose test process was SIGKILLed after runPod; resolves to the dead process's pid. */
async function orphanPod(name: string): Promise<number> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', testProcess(name)], {
    env: {...process.env, VITEST_POOL_ID: '7'},
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const [line] = (await once(child.stdout, 'data')) as [Buffer]
  expect(line.toString()).toBe('running\n')
  child.kill('SIGKILL')
  await once(child, 'exit')
  return child.pid!
}

const podsLeft = async () =>
  (await client.runtime('listPodSandbox', {filter: {labelSelector: {'io.kubernetes.pod.namespace': namespace}}})).items.map(
    (item) => item.metadata?.name,
  )
const logDirectoriesOf = (name: string) => readdirSync(lab().logRoot).filter((entry) => entry.startsWith(`${namespace}_${name}_`))
const cliEnv = {
  ...process.env,
  CONTAINER_RUNTIME_ENDPOINT: lab().endpoint,
  PODCTL_POD_LOGS_ROOT: lab().logRoot,
  PODCTL_POD_DIR_ROOT: podDirRoot,
}
const NO_IMAGES = ['--image-gc-high-threshold', '100', '--image-gc-low-threshold', '99']

beforeAll(async () => {
  await pullBusybox(client)
})

afterAll(async () => {
  await cleanupNamespace(client, namespace)
  client.close()
  rmSync(podDirRoot, {recursive: true, force: true})
})

describe("the library's reaper", () => {
  it("kills the pod of a SIGKILLed test process at the next connect(), not with reap: false, and keeps a live session's pod", async () => {
    const pid = await orphanPod('orphan')
    const [sandbox] = (await client.runtime('listPodSandbox', {filter: {labelSelector: {'io.kubernetes.pod.namespace': namespace}}})).items
    expect(sandbox.labels).toMatchObject({'io.podctl.session.pid': String(pid), 'io.podctl.library.worker': 'vitest-7'})

    await using live = await connect({...roots, reap: false})
    await live.runPod(pod('live'))
    ;(await connect({...roots, reap: false})).close()
    expect((await sandboxesIn(client, namespace)).length).toBe(2)

    const started = Date.now()
    ;(await connect(roots)).close()
    expect(Date.now() - started).toBeLessThan(30_000)
    const left = (await client.runtime('listPodSandbox', {filter: {labelSelector: {'io.kubernetes.pod.namespace': namespace}}})).items
    expect(left.map((item) => item.metadata?.name)).toEqual(['live'])
    expect(logDirectoriesOf('orphan')).toEqual([])
  }, 120_000)

  it('podctl gc --dry-run lists the pod of a SIGKILLed test process; gc kills it with its logs', async () => {
    const pid = await orphanPod('gc-orphan')
    const dry = await podctl(['gc', '-n', namespace, '--dry-run', ...NO_IMAGES], {env: cliEnv})
    expect(dry.code, dry.stderr).toBe(0)
    expect(dry.stdout.split('\n').slice(0, 2)).toEqual([
      `would remove pod gc-orphan_${namespace}`,
      `  why: podctl's library pod (io.podctl.library.worker) whose session, pid ${pid} (podctl library, vitest-7), is gone`,
    ])
    expect(await podsLeft()).toContain('gc-orphan')

    const gc = await podctl(['gc', '-n', namespace, ...NO_IMAGES], {env: cliEnv})
    expect(gc.code, gc.stderr).toBe(0)
    expect(gc.stdout.split('\n')[0]).toBe(`removed pod gc-orphan_${namespace}`)
    expect(await podsLeft()).not.toContain('gc-orphan')
    expect(logDirectoriesOf('gc-orphan')).toEqual([])
  }, 120_000)

  it("a running supervisor's garbage collection kills the pod of a SIGKILLed test process", async () => {
    const agent = startAgent(
      [process.execPath, BIN, 'sync', '--watch', '--all', '-n', namespace, '--gc-period', '1s', ...NO_IMAGES],
      cliEnv,
    )
    try {
      await orphanPod('watched-orphan')
      // Its sandbox goes first, then its log directory.
      const reaped = async () => !(await podsLeft()).includes('watched-orphan') && logDirectoriesOf('watched-orphan').length === 0
      await until('the supervisor to reap the pod and its logs', reaped, {timeoutMs: 30_000, pollMs: 200})
      expect(logDirectoriesOf('watched-orphan')).toEqual([])
      await until('the GarbageCollected event', () => agent.output().includes('removed 1 pod of a gone session'), {timeoutMs: 10_000})
    } finally {
      expect(await agent.stop(), agent.output()).toBe(0)
    }
  }, 120_000)
})
