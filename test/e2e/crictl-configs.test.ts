/**
 * crictl's pod and container configs as crictl sends them, against the lab: crictl's own example
 * configs run with `run --pod-config/--container-config` and with `runp` + `create`, and
 * cgroup_parent, sysctls, namespace options, stdin/tty and both metadata.attempt values reach the
 * runtime (checked with `podctl inspectp`/`inspect` and from inside the container). Nothing leaks.
 */
import {existsSync, mkdtempSync, readdirSync, rmdirSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {cleanupNamespace, lab, labClient, labEnv, sandboxesIn, uniqueNamespace} from '../support/lab.js'
import {podctl} from '../support/podctl.js'
import {pullBusybox} from '../support/pods.js'

const client = labClient()
const namespace = uniqueNamespace('crictl-configs')
const dir = mkdtempSync(join(tmpdir(), 'podctl-crictl-configs-'))
const env = labEnv({PODCTL_POD_DIR_ROOT: join(dir, 'pods'), PODCTL_POD_LOGS_ROOT: lab().logRoot})
const run = (...args: string[]) => podctl(args, {env})
/** cgroupfs on cgroup v1: an absolute path under each controller's root, made by the runtime. */
const cgroupParent = `/podctl-e2e-${namespace}`

const write = (name: string, value: object) => {
  const path = join(dir, name)
  writeFileSync(path, JSON.stringify(value, null, 4))
  return path
}

// cri-tools docs/crictl.md's pod-config.json and container-config.json: only the namespace, uid,
// log directory and image are this test's.
const examplePod = (name: string, extra: {linux?: object} = {}) => ({
  metadata: {name, namespace, attempt: 1, uid: `${namespace}-${name}`},
  log_directory: join(dir, `${name}-logs`),
  linux: {},
  ...extra,
})
const exampleContainer = {
  metadata: {name: 'busybox'},
  image: {image: lab().busybox},
  command: ['top'],
  log_path: 'busybox.0.log',
  linux: {},
}

const json = async (...args: string[]) => {
  const result = await run(...args)
  expect(result.code, result.stderr).toBe(0)
  return JSON.parse(result.stdout)
}

beforeAll(async () => {
  await pullBusybox(client)
})

afterAll(async () => {
  await cleanupNamespace(client, namespace)
  expect(await sandboxesIn(client, namespace)).toEqual([])
  client.close()
  // The runtime leaves the (empty) parent cgroup behind: remove it from every controller.
  for (const controller of existsSync('/sys/fs/cgroup') ? readdirSync('/sys/fs/cgroup') : []) {
    const path = join('/sys/fs/cgroup', controller, cgroupParent)
    if (existsSync(path)) rmdirSync(path)
  }

  rmSync(dir, {recursive: true, force: true})
})

describe("crictl's example configs", () => {
  it('run --pod-config P --container-config C runs them unchanged', async () => {
    const pod = write('run-pod.json', examplePod('nginx-sandbox'))
    const container = write('run-ctr.json', exampleContainer)
    const result = await run('run', '--pod-config', pod, '--container-config', container, '-q', '-o', 'json')
    expect(result.code, result.stderr).toBe(0)
    const [out] = JSON.parse(result.stdout).pods
    expect(out).toMatchObject({pod: 'nginx-sandbox', namespace, phase: 'Running'})
    const {status} = await client.runtime('podSandboxStatus', {podSandboxId: out.id ?? out.sandboxId, verbose: false})
    expect(status?.metadata?.attempt).toBe(1)
    expect(existsSync(join(dir, 'nginx-sandbox-logs', 'busybox.0.log'))).toBe(true)
    expect((await run('kill', 'nginx-sandbox', '-n', namespace)).code).toBe(0)
  })

  it('runp P, then create POD C P, runs them unchanged', async () => {
    const pod = write('runp-pod.json', examplePod('runp-sandbox'))
    const container = write('runp-ctr.json', exampleContainer)
    const runp = await run('runp', pod)
    expect(runp.code, runp.stderr).toBe(0)
    const sandboxId = runp.stdout.trim()
    const create = await run('create', sandboxId.slice(0, 12), container, pod, '--start')
    expect(create.code, create.stderr).toBe(0)
    const inspectp = await json('inspectp', sandboxId, '-o', 'json')
    expect(inspectp.status).toMatchObject({state: 'SANDBOX_READY', metadata: {name: 'runp-sandbox', attempt: 1}})
    const inspect = await json('inspect', create.stdout.trim(), '-o', 'json')
    expect(inspect.status).toMatchObject({state: 'CONTAINER_RUNNING', metadata: {name: 'busybox', attempt: 0}})
    expect((await run('rmp', '-f', sandboxId)).code).toBe(0)
  })
})

describe('fields crictl sends as they are', () => {
  it('cgroup_parent, sysctls, namespace options, tty and both attempts reach the runtime', async () => {
    const pod = write(
      'full-pod.json',
      examplePod('full-sandbox', {
        linux: {
          cgroup_parent: cgroupParent,
          sysctls: {'net.ipv4.ip_unprivileged_port_start': '80'},
          security_context: {namespace_options: {pid: 1}},
        },
      }),
    )
    const container = write('full-ctr.json', {
      ...exampleContainer,
      metadata: {name: 'busybox', attempt: 2},
      command: ['sh', '-c', 'trap "exit 0" TERM; while true; do sleep 1; done'],
      log_path: 'busybox.2.log',
      stdin: true,
      tty: true,
    })
    const runp = await run('runp', pod)
    expect(runp.code, runp.stderr).toBe(0)
    const sandboxId = runp.stdout.trim()
    const create = await run('create', sandboxId.slice(0, 12), container, pod, '--start', '-q')
    expect(create.code, create.stderr).toBe(0)
    const containerId = create.stdout.trim()

    const inspectp = await json('inspectp', sandboxId, '-o', 'json')
    expect(inspectp.status.metadata.attempt).toBe(1)
    expect(inspectp.status.linux.namespaces.options).toMatchObject({network: 'POD', pid: 'CONTAINER', ipc: 'POD'})
    const inspect = await json('inspect', containerId, '-o', 'json')
    expect(inspect.status.metadata).toEqual({name: 'busybox', attempt: 2})
    if (lab().runtimeName === 'cri-o') {
      // CRI-O's verbose status keeps no config: what was sent shows in its infra container's spec.
      expect(inspectp.info.runtimeSpec.linux.cgroupsPath).toMatch(new RegExp(`^${cgroupParent}/`))
      expect(inspectp.info.runtimeSpec.linux.sysctl).toMatchObject({'net.ipv4.ip_unprivileged_port_start': '80'})
    } else {
      expect(inspectp.info.config.linux).toMatchObject({
        cgroup_parent: cgroupParent,
        sysctls: {'net.ipv4.ip_unprivileged_port_start': '80'},
      })
      expect(inspect.info.config).toMatchObject({metadata: {name: 'busybox', attempt: 2}, stdin: true, tty: true})
    }

    expect(inspect.info.runtimeSpec.process.terminal).toBe(true)
    expect(inspect.info.runtimeSpec.linux.cgroupsPath).toMatch(new RegExp(`^${cgroupParent}/`))

    // What the container sees: the sysctl, a terminal on its stdin, and its own PID namespace (its process is PID 1).
    const exec = await run(
      'exec',
      containerId,
      '--',
      'sh',
      '-c',
      'cat /proc/sys/net/ipv4/ip_unprivileged_port_start; readlink /proc/1/fd/0; cat /proc/1/comm',
    )
    // CRI-O gives an exec into a container with a terminal one too (its lines end in CR LF).
    expect({...exec, stdout: exec.stdout.replaceAll('\r\n', '\n')}).toMatchObject({code: 0, stdout: '80\n/dev/pts/0\nsh\n'})

    // A container config's own namespace_options go as given: pid POD joins the sandbox's PID namespace (pause is PID 1).
    const joined = write('joined-ctr.json', {
      ...exampleContainer,
      metadata: {name: 'joined'},
      command: ['sleep', '3600'],
      log_path: 'joined.0.log',
      linux: {security_context: {namespace_options: {pid: 0}}},
    })
    const second = await run('create', sandboxId.slice(0, 12), joined, pod, '--start', '-q')
    if (lab().runtimeName === 'cri-o') {
      // CRI-O refuses it: this sandbox has a PID namespace of its own for each container, none to join.
      expect(second.code).toBe(14)
      expect(second.stderr).toContain('pod level PID namespace requested for the container, but pod sandbox was not similarly configured')
    } else {
      expect(second.code, second.stderr).toBe(0)
      const secondId = second.stdout.trim()
      const joinedConfig = (await json('inspect', secondId, '-o', 'json')).info.config
      expect(joinedConfig.linux.security_context.namespace_options).toEqual({})
      expect(await run('exec', secondId, '--', 'cat', '/proc/1/comm')).toMatchObject({code: 0, stdout: 'pause\n'})
    }

    expect((await run('rmp', '-f', sandboxId)).code).toBe(0)
    expect(await sandboxesIn(client, namespace)).toEqual([])
  })
})
