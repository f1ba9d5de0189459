import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {ambiguousPrefix, createPod, pullBusybox, removePodLogs, runContainer, type TestPod, waitForExit} from '../support/containers.js'
import {cleanupNamespace, lab, labClient, labEnv, sandboxesIn, uniqueNamespace} from '../support/lab.js'
import {podctl} from '../support/podctl.js'

const client = labClient()
const namespace = uniqueNamespace('stats')
const env = labEnv()
let pod: TestPod
let other: TestPod
let burner: string
let idler: string
let exited: string

const KEYS = [
  'containerId',
  'name',
  'podSandboxId',
  'podName',
  'namespace',
  'state',
  'cpuPercent',
  'cpuUsageCoreNanoSeconds',
  'memoryWorkingSetBytes',
  'writableLayerUsedBytes',
  'writableLayerInodesUsed',
  'timestamp',
]

interface Row {
  containerId: string
  name: string
  podName: string
  namespace: string
  cpuPercent: number | null
  memoryWorkingSetBytes: string | null
  writableLayerUsedBytes: string | null
  timestamp: string | null
}

beforeAll(async () => {
  await pullBusybox(client)
  pod = await createPod(client, {name: 'busy', namespace})
  other = await createPod(client, {name: 'calm', namespace})
  burner = await runContainer(client, pod, {name: 'burner', script: 'while :; do :; done', labels: {role: 'burner'}})
  idler = await runContainer(client, other, {name: 'idler', script: 'sleep 3600'})
  exited = await runContainer(client, other, {name: 'finished', script: 'true'})
  await waitForExit(client, exited)
})

afterAll(async () => {
  await cleanupNamespace(client, namespace)
  removePodLogs(pod, other)
  expect(await sandboxesIn(client, namespace)).toEqual([])
  client.close()
})

async function statsJson(args: string[]): Promise<Row[]> {
  const result = await podctl(['stats', '-o', 'json', ...args], {env})
  expect(result.code, result.stderr).toBe(0)
  return (JSON.parse(result.stdout) as {items: Row[]}).items
}

describe('podctl stats', () => {
  it('shows the running containers of a namespace in the documented columns', async () => {
    const result = await podctl(['stats', '-n', namespace], {env})
    expect(result.code).toBe(0)
    const [header, ...rows] = result.stdout.trimEnd().split('\n')
    expect(header.split(/ {2,}/)).toEqual(['CONTAINER', 'NAME', 'POD', 'NAMESPACE', 'CPU %', 'MEM', 'DISK', 'INODES'])
    expect(rows).toHaveLength(2)
    const burnerRow = rows.find((row) => row.includes('burner'))!.split(/ {2,}/)
    expect(burnerRow[0]).toBe(burner.slice(0, 13))
    expect(burnerRow.slice(1, 4)).toEqual(['burner', 'busy', namespace])
    expect(burnerRow[4]).toMatch(/^\d+\.\d{2}$/)
    expect(burnerRow[5]).toMatch(/^\d+(\.\d+)?(B|kB|MB|GB)$/)
    expect(burnerRow[6]).toMatch(/^\d+(\.\d+)?(B|kB|MB|GB)$/)
    expect(burnerRow[7]).toMatch(/^\d+$/)
  })

  it('JSON has stable keys, a numeric CPU %, int64 sizes as strings and RFC 3339 times', async () => {
    const items = await statsJson(['-n', namespace])
    expect(items.map((item) => item.name).sort()).toEqual(['burner', 'idler'])
    for (const item of items) {
      expect(Object.keys(item)).toEqual(KEYS)
      expect(typeof item.cpuPercent).toBe('number')
      expect(item.memoryWorkingSetBytes).toMatch(/^\d+$/)
      expect(Number(item.memoryWorkingSetBytes)).toBeGreaterThan(0)
      expect(item.writableLayerUsedBytes).toMatch(/^\d+$/)
      expect(item.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
    }

    const busy = items.find((item) => item.name === 'burner')!
    const calm = items.find((item) => item.name === 'idler')!
    // A busy loop uses most of a core even on a loaded machine; sleep uses almost none.
    expect(busy.cpuPercent!).toBeGreaterThan(5)
    expect(calm.cpuPercent!).toBeLessThan(busy.cpuPercent!)
  })

  it('filters by pod, label, ID prefix and CONTAINER argument', async () => {
    expect((await statsJson(['--pod', 'calm', '-n', namespace])).map((i) => i.name)).toEqual(['idler'])
    expect((await statsJson(['-p', other.id.slice(0, 12)])).map((i) => i.name)).toEqual(['idler'])
    expect((await statsJson(['-l', 'role=burner'])).map((i) => i.containerId)).toEqual([burner])
    expect((await statsJson(['--id', idler.slice(0, 10)])).map((i) => i.containerId)).toEqual([idler])
    expect((await statsJson([burner.slice(0, 10)])).map((i) => i.containerId)).toEqual([burner])
  })

  it('-a adds containers that are not running: no CPU or memory, but their writable layer', async () => {
    const items = await statsJson(['-n', namespace, '-a'])
    expect(items.map((i) => i.name).sort()).toEqual(['burner', 'finished', 'idler'])
    const done = items.find((i) => i.name === 'finished')!
    expect(done).toMatchObject({cpuPercent: null, memoryWorkingSetBytes: null})
    const table = await podctl(['stats', '-n', namespace, '-a'], {env})
    const row = table.stdout.split('\n').find((line) => line.includes('finished'))!
    const [cpu, mem, disk, inodes] = row.split(/ {2,}/).slice(4)
    expect([cpu, mem]).toEqual(['-', '-'])
    if (lab().runtimeName === 'cri-o') {
      // CRI-O measures no writable layer for a container that is not running (docs/runtimes.md).
      expect(done.writableLayerUsedBytes).toBeNull()
      expect([disk, inodes]).toEqual(['-', '-'])
      return
    }

    expect(done.writableLayerUsedBytes).toMatch(/^\d+$/)
    expect(disk).toMatch(/^\d+(\.\d+)?(B|kB|MB)$/)
    expect(inodes).toMatch(/^\d+$/)
  })

  it('--seconds sets the sampling window', async () => {
    const one = await podctl(['stats', '-n', namespace, '-s', '3'], {env})
    expect(one.code).toBe(0)
    expect(one.ms).toBeGreaterThanOrEqual(3000)
  })

  it('--watch refreshes until interrupted, without clearing a non-terminal screen', async () => {
    const result = await podctl(['stats', '-n', namespace, '-w'], {
      env,
      onSpawn(child) {
        let seen = 0
        child.stdout?.on('data', (chunk: Buffer) => {
          seen += String(chunk).split('CONTAINER ').length - 1
          if (seen >= 3) child.kill('SIGINT')
        })
      },
    })
    expect(result.stdout.split('CONTAINER ').length - 1).toBeGreaterThanOrEqual(3)
    expect(result.stdout).not.toContain('\u001B[')
  })

  it('errors: unknown pod (5), unknown container (5), ambiguous prefix (15), bad flag (2)', async () => {
    const pod404 = await podctl(['stats', '--pod', 'nope', '-n', namespace], {env})
    expect(pod404.code).toBe(5)
    expect(pod404.stderr).toContain(`pod "nope" not found in namespace "${namespace}"`)
    const missing = await podctl(['stats', 'ffffffffffffffffffff'], {env})
    expect(missing.code).toBe(5)
    const prefix = await ambiguousPrefix(client, pod)
    const ambiguous = await podctl(['stats', prefix], {env})
    expect(ambiguous.code).toBe(15)
    const bad = await podctl(['stats', '--seconds', '0'], {env})
    expect(bad.code).toBe(2)
  })
})
