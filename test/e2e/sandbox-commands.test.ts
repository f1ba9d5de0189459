/**
 * runp, create, start, exec, update, stop, rm, stopp, rmp against the lab, one sandbox and one
 * container at a time, as a crictl user debugs a node: with a Pod manifest and podctl's names, and
 * with crictl's own example configs and ID prefixes. What the runtime made (labels, Ready state,
 * the cgroup the container sees, hooks observed on a hostPath) is checked, and nothing leaks.
 */
import {existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {ExitCode} from '../../src/lib/errors.js'
import {cleanupNamespace, lab, labClient, labEnv, sandboxesIn, uniqueNamespace} from '../support/lab.js'
import {podctl} from '../support/podctl.js'
import {pullBusybox} from '../support/pods.js'

const client = labClient()
const ns = uniqueNamespace('sbxcmd')
const crictlNs = uniqueNamespace('sbxcmd-crictl')
const dir = mkdtempSync(join(tmpdir(), 'podctl-sandbox-e2e-'))
const shared = join(dir, 'shared')
const env = labEnv({PODCTL_POD_DIR_ROOT: join(dir, 'pods'), PODCTL_POD_LOGS_ROOT: lab().logRoot})
const run = (...args: string[]) => podctl(args, {env})
const LOOP = 'trap "exit 0" TERM; while true; do sleep 1; done'

const manifest = join(dir, 'pod.yaml')
writeFileSync(
  manifest,
  `apiVersion: v1
kind: Pod
metadata: {name: web, namespace: ${ns}}
spec:
  terminationGracePeriodSeconds: 10
  volumes: [{name: shared, hostPath: {path: ${shared}, type: DirectoryOrCreate}}]
  containers:
  - name: app
    image: ${lab().busybox}
    command: [sh, -c, '${LOOP}']
  - name: debug
    image: ${lab().busybox}
    imagePullPolicy: IfNotPresent
    command: [sh, -c, '${LOOP}']
    lifecycle:
      postStart: {exec: {command: [sh, -c, 'echo started > /shared/poststart']}}
      preStop: {exec: {command: [sh, -c, 'echo bye > /shared/prestop']}}
    volumeMounts: [{name: shared, mountPath: /shared}]
`,
)

beforeAll(async () => {
  await pullBusybox(client)
})

afterAll(async () => {
  await cleanupNamespace(client, ns)
  await cleanupNamespace(client, crictlNs)
  expect(await sandboxesIn(client, ns)).toEqual([])
  expect(await sandboxesIn(client, crictlNs)).toEqual([])
  client.close()
  rmSync(dir, {recursive: true, force: true})
})

async function state(containerId: string): Promise<string> {
  return (await client.runtime('containerStatus', {containerId, verbose: false})).status!.state
}

describe('one sandbox and one container at a time', () => {
  it('runp a manifest, create and start a debug container beside the app, exec, update, stop, rm, stopp, rmp', async () => {
    const runp = await run('runp', manifest, '-q')
    expect(runp.stderr).toBe('')
    expect(runp.code).toBe(0)
    const sandboxId = runp.stdout.trim()
    expect(sandboxId).toMatch(/^[0-9a-f]{64}$/)
    const {status} = await client.runtime('podSandboxStatus', {podSandboxId: sandboxId, verbose: false})
    expect(status).toMatchObject({state: 'SANDBOX_READY', metadata: {name: 'web', namespace: ns}})
    const {containers: none} = await client.runtime('listContainers', {filter: {podSandboxId: sandboxId}})
    expect(none).toEqual([])

    // The app, started at once; the debug container created only, then started by name.
    const app = await run('create', 'web', '-n', ns, '-f', manifest, '--container', 'app', '--start', '-q')
    expect(app.code).toBe(0)
    const appId = app.stdout.trim()
    expect(await state(appId)).toBe('CONTAINER_RUNNING')
    const debug = await run('create', `web_${ns}`, '-f', manifest, '--container', 'debug', '-q')
    expect(debug.code).toBe(0)
    const debugId = debug.stdout.trim()
    expect(await state(debugId)).toBe('CONTAINER_CREATED')
    const {status: created} = await client.runtime('containerStatus', {containerId: debugId, verbose: false})
    expect(created!.labels).toMatchObject({
      'io.kubernetes.pod.name': 'web',
      'io.kubernetes.pod.namespace': ns,
      'io.kubernetes.pod.uid': status!.metadata!.uid,
      'io.kubernetes.container.name': 'debug',
    })
    expect(created!.annotations).toMatchObject({
      'io.kubernetes.pod.terminationGracePeriod': '10',
      'io.kubernetes.container.restartCount': '0',
    })
    expect(created!.logPath).toBe(`${lab().logRoot}/${ns}_web_${status!.metadata!.uid}/debug/0.log`)

    const start = await run('start', '-n', ns, 'web/debug')
    expect(start.code).toBe(0)
    expect(start.stdout).toBe(`${debugId}\n`)
    expect(readFileSync(join(shared, 'poststart'), 'utf8')).toBe('started\n')
    const id = await run('exec', debugId.slice(0, 10), '--', 'id', '-u')
    expect(id).toMatchObject({code: 0, stdout: '0\n'})

    // update --memory changes the limit the container's cgroup (v1) enforces.
    const update = await run('update', debugId.slice(0, 10), '--memory', '64Mi', '--cpus', '0.5')
    expect(update.code).toBe(0)
    expect(update.stdout).toBe(`${debugId}\n`)
    const limits = await run(
      'exec',
      '-n',
      ns,
      'web/debug',
      '--',
      'cat',
      '/sys/fs/cgroup/memory/memory.limit_in_bytes',
      '/sys/fs/cgroup/cpu/cpu.cfs_quota_us',
    )
    expect(limits).toMatchObject({code: 0, stdout: `${64 * 1024 * 1024}\n50000\n`})

    // stop: the preStop hook writes on the hostPath, then SIGTERM ends the loop well inside the grace period.
    const stop = await run('stop', '-n', ns, 'web/debug')
    expect(stop.code).toBe(0)
    expect(stop.stdout).toBe(`${debugId}\n`)
    expect(readFileSync(join(shared, 'prestop'), 'utf8')).toBe('bye\n')
    // Exit 0 from its TERM trap: stopped by SIGTERM, not by the SIGKILL at the end of the grace period.
    const {status: stopped} = await client.runtime('containerStatus', {containerId: debugId, verbose: false})
    expect(stopped).toMatchObject({state: 'CONTAINER_EXITED', exitCode: 0})
    expect(await state(appId)).toBe('CONTAINER_RUNNING')

    const rm = await run('rm', debugId.slice(0, 8))
    expect(rm.code).toBe(0)
    expect(existsSync(created!.logPath)).toBe(false)
    const {containers: left} = await client.runtime('listContainers', {filter: {podSandboxId: sandboxId}})
    expect(left.map((container) => container.id)).toEqual([appId])

    const runningRm = await run('rmp', 'web', '-n', ns)
    expect(runningRm.code).toBe(ExitCode.RUNTIME)
    expect(runningRm.stderr).toBe(`Error: pod web_${ns} is running; stop it first (podctl stopp web_${ns}) or pass --force\n`)
    const stopp = await run('stopp', 'web', '-n', ns)
    expect(stopp.code).toBe(0)
    expect((await client.runtime('podSandboxStatus', {podSandboxId: sandboxId, verbose: false})).status!.state).toBe('SANDBOX_NOTREADY')
    const rmp = await run('rmp', sandboxId.slice(0, 9))
    expect(rmp.code).toBe(0)
    expect(await sandboxesIn(client, ns)).toEqual([])
    expect(existsSync(join(dir, 'pods', status!.metadata!.uid))).toBe(false)
  })

  it("crictl's example configs, crictl's argument forms and ID prefixes", async () => {
    // docs/examples/podsandbox-config.yaml and container-config.yaml of cri-tools, with this test's namespace, image and log directory.
    const logs = join(dir, 'crictl-logs')
    const podConfig = join(dir, 'podsandbox-config.yaml')
    writeFileSync(
      podConfig,
      `metadata:\n  attempt: 1\n  name: busybox-sandbox\n  namespace: ${crictlNs}\n  uid: hdishd83djaidwnduwk28bcsb\n` +
        `log_directory: ${logs}\nlinux:\n  namespaces:\n    options: {}\n`,
    )
    const containerConfig = join(dir, 'container-config.yaml')
    writeFileSync(
      containerConfig,
      `metadata:\n  name: busybox\nimage:\n  image: ${lab().busybox}\ncommand:\n- top\nlog_path: busybox.0.log\nlinux: {}\n`,
    )

    const runp = await run('runp', podConfig)
    expect(runp.code).toBe(0)
    const sandboxId = runp.stdout.trim()
    const {status} = await client.runtime('podSandboxStatus', {podSandboxId: sandboxId, verbose: false})
    expect(status).toMatchObject({state: 'SANDBOX_READY', metadata: {name: 'busybox-sandbox', attempt: 1}})

    const create = await run('create', sandboxId.slice(0, 12), containerConfig, podConfig)
    expect(create.code).toBe(0)
    const containerId = create.stdout.trim()
    const start = await run('start', containerId.slice(0, 12))
    expect(start).toMatchObject({code: 0, stdout: `${containerId}\n`})
    const exec = await run('exec', containerId.slice(0, 12), '--', 'sh', '-c', 'echo $PPID; pidof top >/dev/null && echo top-runs')
    expect(exec.stdout).toMatch(/top-runs\n$/)
    // The container's log is in the pod config's log_directory, as crictl's runtime puts it.
    expect(existsSync(join(logs, 'busybox.0.log'))).toBe(true)

    const stop = await run('stop', '-t', '0', containerId.slice(0, 12))
    expect(stop).toMatchObject({code: 0, stdout: `${containerId}\n`})
    const rmp = await run('rmp', '-f', sandboxId.slice(0, 12))
    expect(rmp.code).toBe(0)
    expect(await sandboxesIn(client, crictlNs)).toEqual([])
  })
})
