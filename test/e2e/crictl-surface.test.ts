/**
 * crictl's habits and the rest of its surface against the lab: global flags before the command,
 * config, imagefsinfo, statsp, events, info -q, inspect -q/-o table, images -v, ps -r, logs
 * --limit-bytes and stats in crictl's layout.
 */
import {mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {ExitCode} from '../../src/lib/errors.js'
import {createPod, pullBusybox, removePodLogs, runContainer, type TestPod, waitForExit} from '../support/containers.js'
import {
  cleanupNamespace,
  imageIdPattern,
  lab,
  labClient,
  labEnv,
  loginRegistry,
  onContainerd16,
  runtimeNamePattern,
  sandboxesIn,
  uniqueNamespace,
} from '../support/lab.js'
import {podctl} from '../support/podctl.js'

const client = labClient()
const namespace = uniqueNamespace('crictl-surface')
const env = labEnv()
/** No endpoint in the environment: the flags before the command must carry it. */
const bare = labEnv({CONTAINER_RUNTIME_ENDPOINT: undefined})
let pod: TestPod
let sleeper: string
let writer: string

beforeAll(async () => {
  await pullBusybox(client)
  pod = await createPod(client, {name: 'surface', namespace})
  sleeper = await runContainer(client, pod, {name: 'sleeper', script: 'sleep 3600'})
  writer = await runContainer(client, pod, {name: 'writer', script: 'echo 0123456789; echo abcdefghij >&2; echo KLMNOPQRST'})
  await waitForExit(client, writer)
})

afterAll(async () => {
  await cleanupNamespace(client, namespace)
  removePodLogs(pod)
  expect(await sandboxesIn(client, namespace)).toEqual([])
  client.close()
})

describe('global flags before the command, against the lab', () => {
  it('podctl -r ENDPOINT ps, -D version, -t 5s pods, img, inspectp', async () => {
    const [ps, version, pods, img, inspectp] = await Promise.all([
      podctl(['-r', lab().endpoint, 'ps', '-n', namespace, '-q'], {env: bare}),
      podctl(['-D', '-r', lab().endpoint, 'version'], {env: bare}),
      podctl(['-t', '5s', '-r', lab().endpoint, 'pods', '-n', namespace, '-q'], {env: bare}),
      podctl(['-r', lab().endpoint, 'img', lab().busybox, '-q'], {env: bare}),
      podctl(['-r', lab().endpoint, 'inspectp', pod.id.slice(0, 12), '-q', '--template', '{{.status.metadata.namespace}}'], {env: bare}),
    ])
    expect(ps).toMatchObject({code: 0, stdout: `${sleeper}\n`, stderr: ''})
    expect(version.code).toBe(0)
    expect(version.stdout).toMatch(new RegExp(`^Runtime Name: +${runtimeNamePattern()}$`, 'm'))
    expect(version.stderr).toMatch(/^debug: RuntimeService\/Version [\d.]+ms OK$/m)
    expect(pods).toMatchObject({code: 0, stdout: `${pod.id}\n`})
    expect(img.code).toBe(0)
    expect(img.stdout).toMatch(new RegExp(`^${imageIdPattern()}\n$`))
    expect(inspectp).toMatchObject({code: 0, stdout: `${namespace}\n`})
  })

  it('ps -r (--resolve-image-path) shows the image by name', async () => {
    const result = await podctl(['-r', lab().endpoint, 'ps', '-n', namespace, '-r'], {env: bare})
    expect(result.code).toBe(0)
    const [, row] = result.stdout.trimEnd().split('\n')
    expect(row.split(/ {2,}/)[1]).toBe(lab().busybox)
  })
})

describe('config on a file of its own', () => {
  it('--set writes crictl keys (keeping the rest), --get and --list read them, and commands use them', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'podctl-config-')), 'crictl.yaml')
    writeFileSync(path, '# for the e2e test\nmax-retries: 2\n')
    const set = await podctl(['-c', path, 'config', '--set', `runtime-endpoint=${lab().endpoint},timeout=7`], {env: bare})
    expect(set).toMatchObject({code: 0, stdout: '', stderr: ''})
    expect(readFileSync(path, 'utf8')).toBe(`# for the e2e test\nmax-retries: 2\nruntime-endpoint: ${lab().endpoint}\ntimeout: 7\n`)
    const [get, list, pods] = await Promise.all([
      podctl(['config', '--config', path, '--get', 'timeout'], {env: bare}),
      podctl(['-c', path, 'config', '--list'], {env: bare}),
      podctl(['-c', path, 'pods', '-n', namespace, '-q'], {env: bare}),
    ])
    expect(get).toMatchObject({code: 0, stdout: '7\n'})
    expect(list.stdout).toContain(`runtime-endpoint       ${lab().endpoint}\n`)
    expect(list.stdout).toContain('timeout                7\n')
    expect(pods).toMatchObject({code: 0, stdout: `${pod.id}\n`})
    const bad = await podctl(['-c', path, 'config', '--set', 'timeout=soon'], {env: bare})
    expect(bad.code).toBe(ExitCode.USAGE)
    expect(bad.stderr).toBe('Error: config option "timeout" is a whole number of seconds, not "soon"\n')
  })
})

describe('the rest of crictl surface', () => {
  it("imagefsinfo prints crictl's document and a table", async () => {
    const [json, table] = await Promise.all([podctl(['imagefsinfo'], {env}), podctl(['imagefsinfo', '-o', 'table'], {env})])
    expect(json.code).toBe(0)
    const {status} = JSON.parse(json.stdout)
    expect(Object.keys(status)).toEqual(['imageFilesystems', 'containerFilesystems'])
    expect(status.imageFilesystems[0].fsId.mountpoint).toMatch(/^\//)
    expect(status.imageFilesystems[0].usedBytes.value).toMatch(/^\d+$/)
    expect(table.stdout.split('\n')[0].split(/ {2,}/)).toEqual(['FILESYSTEM', 'MOUNTPOINT', 'USED', 'INODES', 'TIMESTAMP'])
    expect(table.stdout).toMatch(/^image +\//m)
  })

  it('statsp shows the pod, summed from its containers where containerd has no pod stats', async () => {
    const result = await podctl(['statsp', '-n', namespace, '-o', 'json'], {env})
    expect(result.code, result.stderr).toBe(0)
    const {items} = JSON.parse(result.stdout)
    expect(items).toHaveLength(1)
    expect(items[0]).toMatchObject({podSandboxId: pod.id, podName: 'surface', namespace})
    expect(['ListPodSandboxStats', 'ListContainerStats']).toContain(items[0].source)
    expect(items[0].memoryWorkingSetBytes).toMatch(/^\d+$/)
    expect(typeof items[0].cpuPercent).toBe('number')
    const table = await podctl(['statsp', `surface_${namespace}`], {env})
    const [header, row] = table.stdout.trimEnd().split('\n')
    expect(header.split(/ {2,}/)).toEqual(['POD', 'NAMESPACE', 'POD ID', 'CPU %', 'MEM'])
    expect(row.split(/ {2,}/).slice(0, 3)).toEqual(['surface', namespace, pod.id.slice(0, 13)])
  })

  // Only containerd 1.6 lacks the stream; the stream itself, where there is one, is crictl-e2e's events spec.
  it.runIf(onContainerd16())('events: containerd 1.6 has no GetContainerEvents, a one-line Unimplemented error and exit 6', async () => {
    const result = await podctl(['events'], {env, timeoutMs: 20_000})
    expect(result.code).toBe(ExitCode.UNIMPLEMENTED)
    expect(result.stderr).toMatch(/^Error: runtime at .* does not implement GetContainerEvents: container events need .*\n$/)
    expect(result.stdout).toBe('')
  })

  it('info -q is Status without verbose: the conditions, no runtime config', async () => {
    const result = await podctl(['info', '-q'], {env})
    expect(result.code).toBe(0)
    const document = JSON.parse(result.stdout)
    // Status's own fields: newer runtimes add their handlers and features; never the verbose info's config
    expect(Object.keys(document)[0]).toBe('status')
    expect(Object.keys(document).filter((key) => !['features', 'runtimeHandlers', 'status'].includes(key))).toEqual([])
    // containerd 2.x adds a condition of its own (false on this VM: its cgroup v1 is deprecated)
    const extra = lab().runtime === 'containerd2' ? ['ContainerdHasNoDeprecationWarnings'] : []
    expect(document.status.conditions.map((c: {type: string}) => c.type)).toEqual(['RuntimeReady', 'NetworkReady', ...extra])
  })

  it('inspect -q leaves out the verbose info; -o table prints Key: value blocks', async () => {
    const [quiet, table, image] = await Promise.all([
      podctl(['inspect', sleeper.slice(0, 12), '-q'], {env}),
      podctl(['inspect', sleeper.slice(0, 12), '-o', 'table'], {env}),
      podctl(['inspecti', lab().busybox, '-o', 'table'], {env}),
    ])
    expect(Object.keys(JSON.parse(quiet.stdout))).toEqual(['status'])
    expect(table.stdout).toMatch(new RegExp(`^ID: +${sleeper}$`, 'm'))
    expect(table.stdout).toMatch(/^Name: +sleeper$/m)
    expect(table.stdout).toMatch(/^State: +CONTAINER_RUNNING$/m)
    expect(image.stdout).toMatch(new RegExp(`^Tags: +.*${lab().busybox.replaceAll('.', String.raw`\.`)}`, 'm'))
    expect(image.stdout).toMatch(/^Size: +\d+(\.\d+)?[kM]B$/m)
  })

  it('images -v prints one block per image with the size in bytes', async () => {
    const result = await podctl(['images', lab().busybox, '-v'], {env})
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(new RegExp(`^ID: ${imageIdPattern()}\n`))
    expect(result.stdout).toContain(`RepoTags: ${lab().busybox}\n`)
    expect(result.stdout).toMatch(/^Size: \d+$/m)
    expect(result.stdout).toMatch(/^Pinned: (true|false)$/m)
  })

  it('logs --limit-bytes stops after that many bytes', async () => {
    const [limited, all, zero] = await Promise.all([
      podctl(['logs', writer, '--stream', 'stdout', '--limit-bytes', '14'], {env}),
      podctl(['logs', writer, '--stream', 'stdout', '--limit-bytes', '-1'], {env}),
      podctl(['logs', writer, '--limit-bytes', '0'], {env}),
    ])
    expect(limited).toMatchObject({code: 0, stdout: '0123456789\nKLM'})
    expect(all.stdout).toBe('0123456789\nKLMNOPQRST\n')
    expect([zero.code, zero.stdout, zero.stderr]).toEqual([0, '', ''])
  })

  it('stats -o json also carries crictl\'s layout, {"stats": [CRI ContainerStats]}', async () => {
    const result = await podctl(['stats', '-n', namespace, '-o', 'json'], {env})
    expect(result.code, result.stderr).toBe(0)
    const document = JSON.parse(result.stdout)
    expect(Object.keys(document)).toEqual(['items', 'stats'])
    expect(document.stats).toHaveLength(1)
    expect(document.stats[0].attributes.id).toBe(sleeper)
    expect(document.stats[0].memory.workingSetBytes.value).toMatch(/^\d+$/)
  })
})

describe('pull as crictl pull takes it', () => {
  const login = loginRegistry()
  // No docker config: the credentials can only come from the flags.
  const noConfig = labEnv({DOCKER_CONFIG: mkdtempSync(join(tmpdir(), 'podctl-noconfig-')), HOME: tmpdir()})

  it('--username reads the password from stdin, never echoes it; a wrong one is refused (13)', async () => {
    const [good, bad] = await Promise.all([
      podctl(['pull', '-u', login.user, login.busybox], {env: noConfig, input: `${login.password}\n`}),
      podctl(['pull', '--username', login.user, login.busybox], {env: noConfig, input: 'not-the-password\n'}),
    ])
    expect(good.code, good.stderr).toBe(0)
    expect(good.stdout).toMatch(new RegExp(`^Successfully pulled image "${login.busybox}" in `))
    expect(bad.code).toBe(ExitCode.UNAUTHORIZED)
    for (const result of [good, bad]) {
      for (const secret of [login.password, 'not-the-password']) expect(result.stdout + result.stderr).not.toContain(secret)
    }
  })

  it('--pod-config (a crictl pod config) and --annotation go with the pull', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'podctl-podconfig-')), 'pod.yaml')
    writeFileSync(path, `metadata:\n  name: puller\n  namespace: ${namespace}\n  uid: u-1\nannotations:\n  team: infra\n`)
    const result = await podctl(['pull', '--pod-config', path, '-a', 'purpose=e2e', lab().busybox, '-o', 'json'], {env})
    expect(result.code, result.stderr).toBe(0)
    expect(JSON.parse(result.stdout).images[0]).toMatchObject({image: lab().busybox, pulled: true})
    const bad = await podctl(['pull', '--annotation', 'novalue', lab().busybox], {env})
    expect(bad).toMatchObject({code: ExitCode.USAGE, stderr: 'Error: --annotation "novalue" is not KEY=VALUE\n'})
  })
})
