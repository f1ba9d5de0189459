import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {ExitCode} from '../../src/lib/errors.js'
import {podctl} from '../support/podctl.js'
import {socketDir, startFakeRuntime, versionHandler} from '../support/fake-runtime.js'

const dir = socketDir()
const notReady = join(dir, 'not-ready.sock')
const ready = join(dir, 'ready.sock')
const deprecations = join(dir, 'deprecations.sock')
const noNetworkCondition = join(dir, 'no-network-condition.sock')
const stops: Array<() => Promise<void>> = []
const env = {CONTAINER_RUNTIME_ENDPOINT: undefined, CRI_CONFIG_FILE: undefined}

interface Condition {
  type: string
  status: boolean
  reason: string
  message: string
}

const runtimeReady: Condition = {type: 'RuntimeReady', status: true, reason: '', message: ''}
const networkReady: Condition = {type: 'NetworkReady', status: true, reason: '', message: ''}
const networkNotReady: Condition = {
  type: 'NetworkReady',
  status: false,
  reason: 'NetworkPluginNotReady',
  message: 'cni config uninitialized',
}
// What containerd 1.7 reports while its config uses deprecated properties.
const deprecationWarning: Condition = {
  type: 'ContainerdHasNoDeprecationWarnings',
  status: false,
  reason: 'ContainerdHasDeprecationWarnings',
  message: 'io.containerd.deprecation/cri-registry-mirrors',
}

function runtimeWith(conditions: Condition[], withRuntimeConfig: boolean) {
  return {
    version: versionHandler,
    status: (_call: unknown, cb: (e: null, r: unknown) => void) => cb(null, {status: {conditions}}),
    listPodSandbox: (_c: unknown, cb: (e: null, r: unknown) => void) =>
      cb(null, {
        items: [
          {id: 'a', state: 'SANDBOX_READY', createdAt: '1'},
          {id: 'b', state: 'SANDBOX_NOTREADY', createdAt: '2'},
        ],
      }),
    listContainers: (_c: unknown, cb: (e: null, r: unknown) => void) =>
      cb(null, {containers: [{id: 'c', state: 'CONTAINER_RUNNING', createdAt: '1'}]}),
    ...(withRuntimeConfig
      ? {runtimeConfig: (_c: unknown, cb: (e: null, r: unknown) => void) => cb(null, {linux: {cgroupDriver: 'SYSTEMD'}})}
      : {}),
  }
}

beforeAll(async () => {
  const images = {
    listImages: (_c: unknown, cb: (e: null, r: unknown) => void) =>
      cb(null, {images: [{id: 'sha256:1'}, {id: 'sha256:2'}, {id: 'sha256:3'}]}),
  }
  // One at a time, each stop kept as soon as its server is up.
  const runtimes: Array<[string, Condition[], boolean]> = [
    [notReady, [runtimeReady, networkNotReady], false],
    [ready, [runtimeReady, networkReady], true],
    [deprecations, [runtimeReady, networkReady, deprecationWarning], true],
    [noNetworkCondition, [runtimeReady], true],
  ]
  for (const [socket, conditions, withRuntimeConfig] of runtimes) {
    stops.push(await startFakeRuntime(socket, runtimeWith(conditions, withRuntimeConfig) as never, images as never))
  }
})

afterAll(async () => {
  await Promise.all(stops.map((stop) => stop()))
})

describe('podctl status as a health check', () => {
  it('exits 7 naming the false condition, and still prints the report', async () => {
    const result = await podctl(['status', '-r', notReady, '-o', 'json'], {env})
    expect(result.code).toBe(ExitCode.NOT_READY)
    expect(result.stderr).toBe(
      `Error: runtime at unix://${notReady} is not ready: NetworkReady (NetworkPluginNotReady: cni config uninitialized)\n`,
    )
    const report = JSON.parse(result.stdout)
    expect(report).toMatchObject({
      ready: false,
      pods: {ready: 1, total: 2},
      containers: {running: 1, total: 1},
      images: 3,
      cgroupDriver: null,
      runtime: {name: 'fake', version: '1.0', apiVersion: 'v1', criVersion: '0.1.0'},
    })
  })

  it('shows the table with every condition and the counts', async () => {
    const result = await podctl(['status', '-r', notReady], {env})
    expect(result.code).toBe(ExitCode.NOT_READY)
    expect(result.stdout).toMatch(/^NetworkReady\s+false\s+NetworkPluginNotReady\s+cni config uninitialized$/m)
    expect(result.stdout).toMatch(/^Pods:\s+1 ready \/ 2 total$/m)
    expect(result.stdout).toMatch(/^Images:\s+3$/m)
  })

  it('exits 0 when all conditions hold and reports RuntimeConfig when the runtime has it', async () => {
    const result = await podctl(['status', '-r', ready, '-o', 'yaml'], {env})
    expect(result.code).toBe(0)
    expect(result.stdout).toContain('cgroupDriver: SYSTEMD')
    expect(result.stdout).toContain('ready: true')
  })

  it('judges readiness by RuntimeReady and NetworkReady only: another false condition is a warning, exit 0', async () => {
    const result = await podctl(['status', '-r', deprecations, '-o', 'json'], {env})
    expect(result.code).toBe(0)
    expect(result.stderr).toBe(
      'Warning: runtime condition ContainerdHasNoDeprecationWarnings ' +
        '(ContainerdHasDeprecationWarnings: io.containerd.deprecation/cri-registry-mirrors) is false\n',
    )
    const report = JSON.parse(result.stdout)
    expect(report.ready).toBe(true)
    expect(report.conditions).toHaveLength(3)
  })

  it('shows the advisory condition in the table too', async () => {
    const result = await podctl(['status', '-r', deprecations], {env})
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(/^ContainerdHasNoDeprecationWarnings\s+false\s+ContainerdHasDeprecationWarnings\s+/m)
  })

  it('counts a NetworkReady the runtime does not report as not ready, as the kubelet does', async () => {
    const result = await podctl(['status', '-r', noNetworkCondition, '-o', 'json'], {env})
    expect(result.code).toBe(ExitCode.NOT_READY)
    expect(result.stderr).toBe(`Error: runtime at unix://${noNetworkCondition} is not ready: NetworkReady (not reported)\n`)
    expect(JSON.parse(result.stdout).ready).toBe(false)
  })
})
