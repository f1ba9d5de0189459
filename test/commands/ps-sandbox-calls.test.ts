/**
 * ps asks for the sandboxes only when it needs them: --pod, or a container whose labels do not name
 * its pod (made by crictl, say). A kubelet's containers carry the names, so on its node a listing
 * reads ListContainers alone (a quarter fewer bytes at thousands of pods), and prints the same rows.
 */
import {join} from 'node:path'

import {afterAll, beforeAll, beforeEach, describe, expect, it} from 'vitest'

import {podctl} from '../support/podctl.js'
import {socketDir, startFakeRuntime, versionHandler} from '../support/fake-runtime.js'

const dir = socketDir()
const socket = join(dir, 'cri.sock')
const env = {CONTAINER_RUNTIME_ENDPOINT: undefined, CRI_CONFIG_FILE: undefined}
const args = (...rest: string[]) => ['--runtime-endpoint', socket, ...rest]
let stop: () => Promise<void>
let sandboxCalls = 0

type Callback = (error: null, response: unknown) => void

const kubeLabels = (pod: string, namespace: string, container: string) => ({
  'io.kubernetes.pod.name': pod,
  'io.kubernetes.pod.namespace': namespace,
  'io.kubernetes.pod.uid': `uid-${pod}`,
  'io.kubernetes.container.name': container,
})
const kubelets = [
  {
    id: 'c1'.repeat(32),
    podSandboxId: 'a1'.repeat(32),
    metadata: {name: 'app'},
    state: 'CONTAINER_RUNNING',
    createdAt: '3000000000',
    labels: kubeLabels('web', 'shop', 'app'),
  },
  {
    id: 'c2'.repeat(32),
    podSandboxId: 'a1'.repeat(32),
    metadata: {name: 'log'},
    state: 'CONTAINER_EXITED',
    createdAt: '2000000000',
    labels: kubeLabels('web', 'shop', 'log'),
  },
]
const crictlMade = {
  id: 'c3'.repeat(32),
  podSandboxId: 'b2'.repeat(32),
  metadata: {name: 'debug'},
  state: 'CONTAINER_RUNNING',
  createdAt: '1000000000',
  labels: {},
}
let containers: unknown[] = kubelets

beforeAll(async () => {
  const runtime = {
    version: versionHandler,
    listPodSandbox(_call: unknown, cb: Callback) {
      sandboxCalls++
      cb(null, {
        items: [
          {id: 'a1'.repeat(32), metadata: {name: 'web', namespace: 'shop', uid: 'uid-web'}, state: 'SANDBOX_READY', createdAt: '1'},
          {id: 'b2'.repeat(32), metadata: {name: 'tools', namespace: 'default', uid: 'uid-tools'}, state: 'SANDBOX_READY', createdAt: '1'},
        ],
      })
    },
    listContainers: (_call: unknown, cb: Callback) => cb(null, {containers}),
  }
  stop = await startFakeRuntime(socket, runtime as never, {listImages: (_call: unknown, cb: Callback) => cb(null, {images: []})} as never)
})

beforeEach(() => {
  sandboxCalls = 0
})

afterAll(async () => {
  await stop()
})

const podColumns = (stdout: string) =>
  stdout
    .trimEnd()
    .split('\n')
    .slice(1)
    .map((line) => line.split(/ {3,}/).slice(-2).join(' '))

describe('ps and ListPodSandbox', () => {
  it('containers the kubelet labelled: no ListPodSandbox, POD and NAMESPACE from their labels', async () => {
    containers = kubelets
    for (const output of [[], ['-o', 'name'], ['-o', 'json']]) {
      const result = await podctl(args('ps', '-a', ...output), {env})
      expect(result.code, result.stderr).toBe(0)
    }

    expect(sandboxCalls).toBe(0)
    const table = await podctl(args('ps', '-a'), {env})
    expect(podColumns(table.stdout)).toEqual(['web shop', 'web shop'])
    expect((await podctl(args('ps', '-a', '-o', 'name'), {env})).stdout).toBe('web_shop/app\nweb_shop/log\n')
  })

  it('a container without the labels: one ListPodSandbox, its pod named from its sandbox', async () => {
    containers = [...kubelets, crictlMade]
    const result = await podctl(args('ps', '-a', '--namespace', 'default'), {env})
    expect(result.code, result.stderr).toBe(0)
    expect(sandboxCalls).toBe(1)
    expect(podColumns(result.stdout)).toEqual(['tools default'])
  })

  it('--pod lists the sandboxes beside the containers', async () => {
    containers = kubelets
    const result = await podctl(args('ps', '-a', '--pod', 'web', '-n', 'shop', '-q'), {env})
    expect(result.code, result.stderr).toBe(0)
    expect(sandboxCalls).toBe(1)
    expect(result.stdout).toBe(`${'c1'.repeat(32)}\n${'c2'.repeat(32)}\n`)
  })
})
