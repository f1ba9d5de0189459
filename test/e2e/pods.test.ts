import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {parse as parseYaml} from 'yaml'

import type {CriClient} from '../../src/lib/cri/client.js'
import {
  cleanupNamespace,
  createSandbox,
  lab,
  labClient,
  labEnv,
  makeContainerLogDir,
  onContainerd16,
  runtimeNamePattern,
  sandboxesIn,
  uniqueNamespace,
} from '../support/lab.js'
import {podctl} from '../support/podctl.js'
import {waitForExit} from '../support/pods.js'

const HEADER = 'POD ID          NAME'
const nsA = uniqueNamespace('e2e-pods-a')
const nsB = uniqueNamespace('e2e-pods-b')
let client: CriClient
const ids: Record<string, string> = {}

const run = (args: string[]) => podctl(args, {env: labEnv()})
const columns = (line: string) => line.trim().split(/\s{3,}/)

beforeAll(async () => {
  client = labClient()
  await client.image('pullImage', {image: {image: lab().busybox}}, {timeoutMs: 300_000})
  // Created one after another so "newest first" has a known order: web, web2, old, db, handler.
  ids.web = await createSandbox(client, {name: 'web', namespace: nsA, labels: {app: 'web', tier: 'front'}})
  ids.web2 = await createSandbox(client, {name: 'web2', namespace: nsA, labels: {app: 'web2'}})
  ids.old = await createSandbox(client, {name: 'old', namespace: nsA, labels: {app: 'old'}, attempt: 1})
  await client.runtime('stopPodSandbox', {podSandboxId: ids.old})
  ids.db = await createSandbox(client, {name: 'db', namespace: nsB, labels: {app: 'db'}})
  ids.handler = await createSandbox(client, {name: 'handled', namespace: nsB, runtimeHandler: 'test-handler'})

  // web runs one container and has one that already exited: CONTAINERS shows 1/2.
  const status = await client.runtime('podSandboxStatus', {podSandboxId: ids.web})
  const sandboxConfig = {
    metadata: status.status?.metadata,
    logDirectory: `${lab().logRoot}/${nsA}_web_${status.status?.metadata?.uid}`,
    linux: {},
  }
  for (const [name, command] of [
    ['sleeper', ['sleep', '3600']],
    ['done', ['true']],
  ] as const) {
    makeContainerLogDir(sandboxConfig, name)
    const created = await client.runtime('createContainer', {
      podSandboxId: ids.web,
      config: {metadata: {name}, image: {image: lab().busybox}, command: [...command], logPath: `${name}/0.log`},
      sandboxConfig,
    })
    await client.runtime('startContainer', {containerId: created.containerId})
  }

  // "done" must have exited for CONTAINERS to read 1/2: wait for it, and fail here (not later, misleadingly) if it does not.
  const {containers} = await client.runtime('listContainers', {filter: {podSandboxId: ids.web}})
  await waitForExit(client, containers.find((c) => c.metadata?.name === 'done')!.id)
})

afterAll(async () => {
  await Promise.all([cleanupNamespace(client, nsA), cleanupNamespace(client, nsB)])
  expect(await sandboxesIn(client, nsA)).toEqual([])
  expect(await sandboxesIn(client, nsB)).toEqual([])
  client.close()
})

describe('podctl pods', () => {
  it('prints the documented columns, newest first, with states, container counts and ages', async () => {
    const result = await run(['pods', '-n', nsA])
    expect(result.code).toBe(0)
    const [header, ...rows] = result.stdout.trimEnd().split('\n')
    expect(columns(header)).toEqual(['POD ID', 'NAME', 'NAMESPACE', 'STATE', 'CONTAINERS', 'ATTEMPT', 'CREATED'])
    expect(header.startsWith(HEADER)).toBe(true)
    expect(rows.map((row) => columns(row).slice(0, 6))).toEqual([
      [ids.old.slice(0, 13), 'old', nsA, 'NotReady', '0/0', '1'],
      [ids.web2.slice(0, 13), 'web2', nsA, 'Ready', '0/0', '0'],
      [ids.web.slice(0, 13), 'web', nsA, 'Ready', '1/2', '0'],
    ])
    // humanDuration's wording under an hour: "1 second" is singular, so \d+ seconds alone fails one run in many.
    for (const row of rows) expect(columns(row)[6]).toMatch(/^(Less than a second|1 second|\d+ seconds|About a minute|\d+ minutes) ago$/)
  })

  it('matches names exactly unless globbed (web does not match web2)', async () => {
    const exact = await run(['pods', '-n', nsA, '--name', 'web', '-q'])
    expect(exact.stdout.trim().split('\n')).toEqual([ids.web])
    const glob = await run(['pods', '-n', nsA, '--name', 'web*', '-q'])
    expect(glob.stdout.trim().split('\n')).toEqual([ids.web2, ids.web])
    const nsGlob = await run(['pods', '--namespace', `${nsA.slice(0, -3)}*`, '--name', 'web', '-q'])
    expect(nsGlob.stdout.trim().split('\n')).toEqual([ids.web])
  })

  it('filters by label selector (server-side), state, ID prefix, --latest and --last', async () => {
    expect((await run(['pods', '-l', 'app=web', '-l', 'tier=front', '-q'])).stdout.trim()).toBe(ids.web)
    expect((await run(['pods', '-l', 'app=web,tier=back', '-q'])).stdout).toBe('')
    expect((await run(['pods', '-n', nsA, '--state', 'notready', '-q'])).stdout.trim()).toBe(ids.old)
    expect((await run(['pods', '-n', nsA, '--state', 'ready', '-q'])).stdout.trim().split('\n')).toEqual([ids.web2, ids.web])
    expect((await run(['pods', '--id', ids.db.slice(0, 10), '-q'])).stdout.trim()).toBe(ids.db)
    expect((await run(['pods', '-n', nsA, '--latest', '-q'])).stdout.trim()).toBe(ids.old)
    expect((await run(['pods', '-n', nsA, '--last', '2', '-q'])).stdout.trim().split('\n')).toEqual([ids.old, ids.web2])
  })

  it('prints full IDs with --no-trunc and -q', async () => {
    const result = await run(['pods', '-n', nsB, '--no-trunc'])
    expect(result.stdout).toContain(ids.db)
    const quiet = await run(['pods', '-n', nsB, '-q'])
    expect(quiet.stdout).toBe(`${ids.handler}\n${ids.db}\n`)
  })

  it('-o wide adds UID, IP from the sandbox status, and the runtime handler', async () => {
    const result = await run(['pods', '-n', nsB, '-o', 'wide'])
    expect(result.code).toBe(0)
    const [header, ...rows] = result.stdout.trimEnd().split('\n')
    expect(columns(header)).toEqual(['POD ID', 'NAME', 'NAMESPACE', 'STATE', 'CONTAINERS', 'ATTEMPT', 'CREATED', 'UID', 'IP', 'RUNTIME'])
    const byName = Object.fromEntries(rows.map((row) => [columns(row)[1], columns(row)]))
    expect(byName.handled[9]).toBe('test-handler')
    expect(byName.db[9]).toBe('(default)')
    expect(byName.db[8]).toMatch(/^\d+\.\d+\.\d+\.\d+$/)
    const status = await client.runtime('podSandboxStatus', {podSandboxId: ids.db})
    expect(byName.db[7]).toBe(status.status?.metadata?.uid)
    expect(byName.db[8]).toBe(status.status?.network?.ip)
  })

  it('-o json and -o yaml carry the CRI objects with stable camelCase keys', async () => {
    const json = await run(['pods', '-n', nsA, '--name', 'web', '-o', 'json'])
    expect(json.code).toBe(0)
    const parsed = JSON.parse(json.stdout)
    expect(Object.keys(parsed)).toEqual(['items'])
    expect(parsed.items).toHaveLength(1)
    const [pod] = parsed.items
    expect(Object.keys(pod).sort()).toEqual(['annotations', 'createdAt', 'id', 'labels', 'metadata', 'runtimeHandler', 'state'])
    expect(pod).toMatchObject({
      id: ids.web,
      metadata: {name: 'web', namespace: nsA, attempt: 0},
      state: 'SANDBOX_READY',
      labels: {app: 'web', tier: 'front', 'io.kubernetes.pod.name': 'web'},
      runtimeHandler: '',
    })
    expect(pod.createdAt).toMatch(/^\d{19}$/)
    const yaml = await run(['pods', '-n', nsA, '--name', 'web', '-o', 'yaml'])
    expect(parseYaml(yaml.stdout)).toEqual(parsed)
    const jsonFlag = await run(['pods', '-n', nsA, '--name', 'web', '--json'])
    expect(JSON.parse(jsonFlag.stdout)).toEqual(parsed)
  })

  it('-o name prints the kubelet full name', async () => {
    const result = await run(['pods', '-n', nsA, '--state', 'ready', '-o', 'name'])
    expect(result.stdout).toBe(`web2_${nsA}\nweb_${nsA}\n`)
  })

  it('an empty list is the header (table) or an empty items list (json), exit 0', async () => {
    const table = await run(['pods', '-n', 'no-such-namespace'])
    expect(table.code).toBe(0)
    expect(table.stdout).toBe('POD ID   NAME   NAMESPACE   STATE   CONTAINERS   ATTEMPT   CREATED\n')
    const json = await run(['pods', '-n', 'no-such-namespace', '-o', 'json'])
    expect(JSON.parse(json.stdout)).toEqual({items: []})
  })

  it('makes one ListPodSandbox and one ListContainers call, whatever the number of pods', async () => {
    const result = await run(['pods', '--debug'])
    expect(result.code).toBe(0)
    const calls = result.stderr.split('\n').filter((line) => /Service\//.test(line))
    expect(calls.map((line) => line.replace(/^debug: (\S+).*$/, '$1')).sort()).toEqual([
      'RuntimeService/ListContainers',
      'RuntimeService/ListPodSandbox',
    ])
    const wide = await run(['pods', '-n', nsB, '-o', 'wide', '--debug'])
    expect(wide.stderr.split('\n').filter((line) => line.includes('PodSandboxStatus'))).toHaveLength(2)
  })

  it('refuses bad filter input with a one-line usage error', async () => {
    const label = await run(['pods', '-l', 'app'])
    expect(label.code).toBe(2)
    expect(label.stderr).toBe('Error: --label "app" must be KEY=VALUE, e.g. --label app=web\n')
    const state = await run(['pods', '--state', 'running'])
    expect(state.code).toBe(2)
    expect(state.stderr.trim().split('\n')).toHaveLength(1)
  })
})

describe('podctl status (runtime)', () => {
  it('reports the runtime ready, its version and what it runs', async () => {
    const result = await run(['status'])
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(new RegExp(`^Endpoint:\\s+${lab().endpoint} \\(from env\\)$`, 'm'))
    expect(result.stdout).toMatch(/^Pods:\s+\d+ ready \/ \d+ total$/m)
    expect(result.stdout).toMatch(/^Containers:\s+\d+ running \/ \d+ total$/m)
    expect(result.stdout).toMatch(new RegExp(String.raw`Runtime:\s+${runtimeNamePattern()} \S+ \(CRI v1\)`))
    expect(result.stdout).toMatch(/^RuntimeReady\s+true/m)
    expect(result.stdout).toMatch(/^NetworkReady\s+true/m)
    expect(result.stdout).toMatch(/^CONDITION\s+STATUS\s+REASON\s+MESSAGE$/m)
    // containerd 1.6 has no RuntimeConfig: podctl degrades instead of failing; the others say cgroupfs (the lab's)
    expect(result.stdout).toMatch(onContainerd16() ? /^Cgroup driver:\s+\(not reported/m : /^Cgroup driver:\s+CGROUPFS$/m)
  })

  it("-o json has stable keys and counts that include this test's pods", async () => {
    const result = await run(['status', '-o', 'json'])
    expect(result.code).toBe(0)
    const report = JSON.parse(result.stdout)
    expect(Object.keys(report)).toEqual([
      'endpoint',
      'imageEndpoint',
      'runtime',
      'conditions',
      'pods',
      'containers',
      'images',
      'cgroupDriver',
      'ready',
    ])
    expect(report.runtime).toMatchObject({name: lab().runtimeName, version: lab().runtimeVersion, apiVersion: 'v1'})
    expect(report.ready).toBe(true)
    expect(report.conditions.map((c: {type: string}) => c.type)).toEqual(expect.arrayContaining(['RuntimeReady', 'NetworkReady']))
    expect(report.pods.total).toBeGreaterThanOrEqual(5)
    expect(report.pods.ready).toBeGreaterThanOrEqual(4)
    expect(report.containers.running).toBeGreaterThanOrEqual(1)
    expect(report.images).toBeGreaterThanOrEqual(2)
  })

  it('reads the endpoint from a crictl config file when no flag or env names one', async () => {
    const {mkdtempSync, writeFileSync} = await import('node:fs')
    const dir = mkdtempSync('/tmp/podctl-crictl-')
    writeFileSync(`${dir}/crictl.yaml`, `runtime-endpoint: ${lab().endpoint}\ntimeout: 5\n`)
    const result = await podctl(['status', '--config', `${dir}/crictl.yaml`], {env: {...labEnv(), CONTAINER_RUNTIME_ENDPOINT: undefined}})
    expect(result.code).toBe(0)
    expect(result.stdout).toContain('(from config)')
  })
})
