/**
 * kubectl's habits in exec and logs: a pod name alone picks its only container (or the one its
 * kubectl.kubernetes.io/default-container annotation names), `--container NAME` picks by name, and
 * `-c NAME` (crictl's --config in podctl) is taken for the container when no file of that name exists.
 */
import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {ExitCode} from '../../src/lib/errors.js'
import {endpointEnv, podctl} from '../support/podctl.js'
import {socketDir, startFakeRuntime, versionHandler} from '../support/fake-runtime.js'

const dir = socketDir()
const socket = join(dir, 'cri.sock')
const logs = mkdtempSync(join(tmpdir(), 'podctl-kubectl-container-'))
const env = endpointEnv()
let stop: () => Promise<void>

type Callback = (error: null, response: unknown) => void

const sandbox = (id: string, name: string, annotations: Record<string, string> = {}) => ({
  id,
  metadata: {name, namespace: 'shop', uid: `uid-${name}`, attempt: 0},
  state: 'SANDBOX_READY',
  createdAt: '1',
  labels: {},
  annotations,
})

const container = (id: string, sandboxId: string, name: string, extra: {attempt?: number; init?: boolean; exited?: boolean} = {}) => ({
  id: id.padEnd(64, '0'),
  podSandboxId: sandboxId,
  metadata: {name, attempt: extra.attempt ?? 0},
  image: {image: 'localhost:5000/app:v1'},
  imageRef: 'sha256:1',
  state: extra.exited ? 'CONTAINER_EXITED' : 'CONTAINER_RUNNING',
  createdAt: String(10 + (extra.attempt ?? 0)),
  labels: {'io.kubernetes.container.name': name},
  annotations: extra.init ? {'io.podctl.containerType': 'init'} : {},
})

const sandboxes = [
  sandbox('5a11', 'web'),
  sandbox('5a22', 'multi'),
  sandbox('5a33', 'annotated', {'kubectl.kubernetes.io/default-container': 'log'}),
]
const containers = [
  // web: a finished init container, an old attempt of server, and the running one
  container('e1', '5a11', 'setup', {init: true, exited: true}),
  container('e2', '5a11', 'server', {attempt: 0, exited: true}),
  container('e3', '5a11', 'server', {attempt: 1}),
  container('e4', '5a22', 'app'),
  container('e5', '5a22', 'log'),
  container('e6', '5a33', 'app'),
  container('e7', '5a33', 'log'),
]

beforeAll(async () => {
  for (const c of containers)
    writeFileSync(join(logs, `${c.id}.log`), `2024-05-01T10:00:00.000000000Z stdout F log of ${c.id.slice(0, 2)}\n`)
  const runtime = {
    version: versionHandler,
    listPodSandbox: (_call: unknown, cb: Callback) => cb(null, {items: sandboxes}),
    listContainers: (_call: unknown, cb: Callback) => cb(null, {containers}),
    containerStatus(call: {request: {containerId: string}}, cb: Callback) {
      const found = containers.find((c) => c.id === call.request.containerId)!
      cb(null, {status: {...found, logPath: join(logs, `${found.id}.log`), startedAt: '1', finishedAt: '0'}})
    },
    execSync: (call: {request: {containerId: string}}, cb: Callback) =>
      cb(null, {stdout: Buffer.from(`ran in ${call.request.containerId.slice(0, 2)}\n`), stderr: Buffer.alloc(0), exitCode: 0}),
  }
  stop = await startFakeRuntime(socket, runtime as never)
})

afterAll(async () => {
  await stop()
})

const run = (args: string[]) => podctl(['-r', socket, ...args], {env, timeoutMs: 30_000})

describe('a pod name alone, as kubectl takes it', () => {
  it('exec -n NS POD -- cmd runs in its only current container (not the init container or the old attempt)', async () => {
    expect(await run(['exec', '-n', 'shop', 'web', '--', 'env'])).toMatchObject({code: 0, stdout: 'ran in e3\n', stderr: ''})
  })

  it('logs -n NS POD reads its only current container', async () => {
    expect(await run(['logs', '-n', 'shop', 'web'])).toMatchObject({code: 0, stdout: 'log of e3\n', stderr: ''})
  })

  it("takes the kubectl.kubernetes.io/default-container annotation's container", async () => {
    expect(await run(['exec', '-n', 'shop', 'annotated', '--', 'env'])).toMatchObject({code: 0, stdout: 'ran in e7\n'})
  })

  it('a pod of several containers is ambiguous: the error names them and how to list them', async () => {
    const result = await run(['exec', '-n', 'shop', 'multi', '--', 'env'])
    expect(result.code).toBe(ExitCode.AMBIGUOUS)
    expect(result.stderr).toBe(
      'Error: pod "multi" has 2 containers (app, log): name one as multi/CONTAINER or with --container NAME; ' +
        'list them with: podctl ps --pod multi -n shop -a\n',
    )
  })

  it('an ID prefix still wins, as in crictl; a name that is neither says both were looked for', async () => {
    expect(await run(['exec', 'e4', '--', 'env'])).toMatchObject({code: 0, stdout: 'ran in e4\n'})
    const result = await run(['logs', '-n', 'shop', 'nothing'])
    expect(result.code).toBe(ExitCode.NOT_FOUND)
    expect(result.stderr).toBe(
      'Error: container "nothing" not found: no container ID starts with it and no pod has that name in namespace "shop"; ' +
        'list containers with: podctl ps -a\n',
    )
  })

  it('a pod in another namespace says which one to add', async () => {
    const result = await run(['exec', 'web', '--', 'env'])
    expect(result.code).toBe(ExitCode.NOT_FOUND)
    expect(result.stderr).toBe('Error: pod "web" not found in namespace default; it exists in shop: add -n shop\n')
  })
})

describe('naming the container', () => {
  it('--container NAME picks it by name', async () => {
    expect(await run(['exec', '-n', 'shop', 'multi', '--container', 'log', '--', 'env'])).toMatchObject({code: 0, stdout: 'ran in e5\n'})
    expect(await run(['logs', '-n', 'shop', 'multi', '--container', 'app'])).toMatchObject({code: 0, stdout: 'log of e4\n'})
  })

  it('exec POD -c NAME: with no file of that name, -c is taken for the container, and said so', async () => {
    const result = await run(['exec', '-n', 'shop', 'multi', '-c', 'log', '--', 'env'])
    expect(result).toMatchObject({code: 0, stdout: 'ran in e5\n'})
    expect(result.stderr).toBe(
      "-c log: no config file of that name, so taken as the container (podctl's -c is crictl's --config; write --container log)\n",
    )
  })

  it('-c NAME that is neither a file nor a container says what was meant and how to list containers', async () => {
    const result = await run(['logs', '-n', 'shop', 'multi', '-c', 'server'])
    expect(result.code).toBe(ExitCode.USAGE)
    expect(result.stderr).toBe(
      "Error: cannot read config file server: no such file (podctl's -c is crictl's --config; a container is --container NAME), " +
        'and as a container: pod "multi" has no container named "server" (its containers: app, log); ' +
        'list them with: podctl ps --pod multi -n shop -a\n',
    )
  })

  it('-c FILE that exists is still the crictl config file', async () => {
    const config = join(logs, 'crictl.yaml')
    writeFileSync(config, `runtime-endpoint: unix://${socket}\n`)
    const result = await podctl(['exec', '-c', config, '-n', 'shop', 'web', '--', 'env'], {env})
    expect(result).toMatchObject({code: 0, stdout: 'ran in e3\n', stderr: ''})
  })
})
