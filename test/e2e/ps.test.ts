import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {parse as parseYaml} from 'yaml'

import type {CriClient} from '../../src/lib/cri/client.js'
import {createContainer, ensureImage, tableRows, waitExited} from '../support/inspect-fixtures.js'
import {cleanupNamespace, createSandbox, lab, labClient, labEnv, sandboxesIn, uniqueNamespace} from '../support/lab.js'
import {podctl} from '../support/podctl.js'

const HEADERS = ['CONTAINER', 'IMAGE', 'CREATED', 'STATE', 'NAME', 'ATTEMPT', 'POD ID', 'POD', 'NAMESPACE']

describe('podctl ps', () => {
  let client: CriClient
  const ns = uniqueNamespace('e2e-ps')
  /** A second namespace for a container created by image ID, as the kubelet does. */
  const kubeletNs = uniqueNamespace('e2e-ps-id')
  const env = labEnv()
  const ids: Record<string, string> = {}
  let webPod = ''
  let dbPod = ''
  let imageId = ''

  const run = (...args: string[]) => podctl(['ps', '-n', ns, ...args], {env})
  const names = (stdout: string) =>
    tableRows(stdout)
      .slice(1)
      .map((row) => row[4])

  beforeAll(async () => {
    client = labClient()
    imageId = await ensureImage(client, lab().busybox)
    let kubeletPod = ''
    ;[webPod, dbPod, kubeletPod] = await Promise.all([
      createSandbox(client, {name: 'web', namespace: ns}),
      createSandbox(client, {name: 'db', namespace: ns}),
      createSandbox(client, {name: 'app', namespace: kubeletNs}),
    ])
    ids.byImageId = await createContainer(client, {podId: kubeletPod, name: 'app', image: imageId})
    // Created one after the other so "newest first" has a known order: idle is the newest.
    ids.web = await createContainer(client, {podId: webPod, name: 'web'})
    ids.web2 = await createContainer(client, {podId: webPod, name: 'web2', labels: {tier: 'front'}})
    ids.db = await createContainer(client, {podId: dbPod, name: 'db'})
    ids.job = await createContainer(client, {podId: webPod, name: 'job', command: ['sh', '-c', 'exit 3']})
    ids.idle = await createContainer(client, {podId: webPod, name: 'idle', start: false})
    await waitExited(client, ids.job)
  })

  afterAll(async () => {
    await Promise.all([cleanupNamespace(client, ns), cleanupNamespace(client, kubeletNs)])
    expect(await sandboxesIn(client, ns)).toEqual([])
    expect(await sandboxesIn(client, kubeletNs)).toEqual([])
    client.close()
  })

  it('lists running containers newest first with the crictl columns', async () => {
    const {code, stdout, stderr} = await run()
    expect(stderr).toBe('')
    expect(code).toBe(0)
    const [header, ...rows] = tableRows(stdout)
    expect(header).toEqual(HEADERS)
    expect(rows.map((row) => row[4])).toEqual(['db', 'web2', 'web'])
    const web = rows.find((row) => row[4] === 'web')!
    expect(web[0]).toBe(ids.web.slice(0, 13))
    expect(web[1]).toBe(lab().busybox)
    expect(web[2]).toMatch(/ago$/)
    expect(web[3]).toBe('Running')
    expect(web[5]).toBe('0')
    expect(web[6]).toBe(webPod.slice(0, 13))
    expect(web.slice(7)).toEqual(['web', ns])
  })

  it('shows every state with -a and one state with --state', async () => {
    const all = await run('-a')
    expect(names(all.stdout)).toEqual(['idle', 'job', 'db', 'web2', 'web'])
    const states = Object.fromEntries(
      tableRows(all.stdout)
        .slice(1)
        .map((row) => [row[4], row[3]]),
    )
    expect(states).toMatchObject({idle: 'Created', job: 'Exited', web: 'Running'})
    expect(names((await run('--state', 'exited')).stdout)).toEqual(['job'])
    expect(names((await run('--state', 'created')).stdout)).toEqual(['idle'])
    // crictl's spellings: any case, and -s.
    expect(names((await run('--state', 'Running')).stdout)).toEqual(['db', 'web2', 'web'])
    expect(names((await run('-s', 'EXITED')).stdout)).toEqual(['job'])
    const bad = await run('--state', 'Stopped')
    expect(bad.code).toBe(2)
    expect(bad.stderr).toBe('Error: --state "Stopped" is not a state; use one of created, running, exited, unknown (any case)\n')
  })

  it('matches --name exactly unless it has a glob', async () => {
    expect(names((await run('--name', 'web')).stdout)).toEqual(['web'])
    expect(names((await run('--name', 'web*')).stdout)).toEqual(['web2', 'web'])
    expect(names((await run('--name', 'we')).stdout)).toEqual([])
  })

  it('filters by pod name, name_namespace and sandbox ID prefix', async () => {
    expect(names((await run('--pod', 'web')).stdout)).toEqual(['web2', 'web'])
    expect(names((await run('-a', '--pod', 'web')).stdout)).toEqual(['idle', 'job', 'web2', 'web'])
    expect(names((await podctl(['ps', '--pod', `db_${ns}`], {env})).stdout)).toEqual(['db'])
    expect(names((await run('--pod', dbPod.slice(0, 12))).stdout)).toEqual(['db'])
  })

  it('fails with NotFound for an unknown pod, in every format', async () => {
    for (const format of ['table', 'json']) {
      const {code, stdout, stderr} = await run('--pod', 'nope', '-o', format)
      expect(code).toBe(5)
      expect(stdout).toBe('')
      expect(stderr).toMatch(/pod "nope" not found in namespace/)
    }
  })

  it('filters by label (server side), image, ID prefix, --latest and --last', async () => {
    expect(names((await run('-l', 'tier=front')).stdout)).toEqual(['web2'])
    expect(names((await run('--image', lab().busybox)).stdout)).toEqual(['db', 'web2', 'web'])
    expect(names((await run('--image', '*/podctl/busybox*')).stdout)).toEqual(['db', 'web2', 'web'])
    expect(names((await run('--image', 'busybox')).stdout)).toEqual([])
    expect(names((await run('-a', '--id', ids.job.slice(0, 10))).stdout)).toEqual(['job'])
    expect(names((await run('--latest')).stdout)).toEqual(['idle'])
    expect(names((await run('--last', '2', '--state', 'running')).stdout)).toEqual(['db', 'web2'])
  })

  it('names an image given by ID after its tag, and --image finds it in every format', async () => {
    const [, row] = tableRows((await podctl(['ps', '-n', kubeletNs], {env})).stdout)
    expect([lab().busybox, `${lab().registry}/podctl/busybox:latest`]).toContain(row[1])
    const quiet = await podctl(['ps', '-n', kubeletNs, '--image', lab().busybox, '-q'], {env})
    expect(quiet.stdout).toBe(`${ids.byImageId}\n`)
    const json = JSON.parse((await podctl(['ps', '-n', kubeletNs, '--image', '*/podctl/busybox:*', '-o', 'json'], {env})).stdout)
    expect(json.containers.map((c: {id: string; image: {image: string}}) => [c.id, c.image.image])).toEqual([[ids.byImageId, imageId]])
  })

  it('prints full IDs with -q and only the namespace asked for', async () => {
    const {code, stdout} = await run('-q', '-a')
    expect(code).toBe(0)
    expect(stdout.trim().split('\n')).toEqual([ids.idle, ids.job, ids.db, ids.web2, ids.web])
    const other = await podctl(['ps', '-a', '-q', '-n', `${ns}-none`], {env})
    expect(other.stdout).toBe('')
  })

  it('prints CRI Container objects as JSON and YAML, with the same filters', async () => {
    const json = await run('-a', '--name', 'web*', '-o', 'json')
    expect(json.code).toBe(0)
    const parsed = JSON.parse(json.stdout)
    expect(Object.keys(parsed)).toEqual(['containers'])
    expect(parsed.containers.map((c: {id: string}) => c.id)).toEqual([ids.web2, ids.web])
    const [web2] = parsed.containers
    expect(web2).toMatchObject({
      podSandboxId: webPod,
      metadata: {name: 'web2', attempt: 0},
      state: 'CONTAINER_RUNNING',
      labels: {tier: 'front'},
    })
    expect(web2.createdAt).toMatch(/^\d{19}$/)
    expect(web2.image.image).toBe(lab().busybox)
    const yaml = parseYaml((await run('-a', '--name', 'web*', '-o', 'yaml')).stdout)
    expect(yaml).toEqual(parsed)
  })

  it('prints name_namespace/container with -o name, which inspect accepts back', async () => {
    const {stdout} = await run('--name', 'web', '-o', 'name')
    expect(stdout.trim()).toBe(`web_${ns}/web`)
    const inspect = await podctl(['inspect', stdout.trim(), '-o', 'jsonpath={.status.id}'], {env})
    expect(inspect.stdout.trim()).toBe(ids.web)
  })

  it('adds EXIT CODE and IMAGE REF with -o wide', async () => {
    const {code, stdout} = await run('-a', '-o', 'wide')
    expect(code).toBe(0)
    const [header, ...rows] = tableRows(stdout)
    expect(header).toEqual([...HEADERS, 'EXIT CODE', 'IMAGE REF'])
    const byName = Object.fromEntries(rows.map((row) => [row[4], row]))
    expect(byName.job[9]).toBe('3')
    expect(byName.web[9]).toBe('-')
    expect(byName.web[10]).toMatch(/^[0-9a-f]{13}$|@sha256:/)
  })

  it('shows full IDs with --no-trunc', async () => {
    const rows = tableRows((await run('--name', 'web', '--no-trunc')).stdout)
    expect(rows[1][0]).toBe(ids.web)
    expect(rows[1][6]).toBe(webPod)
  })

  it('rejects bad flag values with a usage error', async () => {
    const state = await run('--state', 'sleeping')
    expect(state.code).toBe(2)
    expect(state.stderr).toMatch(/sleeping/)
    const label = await run('-l', 'novalue')
    expect(label.code).toBe(2)
    expect(label.stderr).toMatch(/--label "novalue" must be KEY=VALUE/)
    const glob = await podctl(['ps', '--pod', 'web', '-n', 'e2e-*'], {env})
    expect(glob.code).toBe(2)
    expect(glob.stderr).toMatch(/--pod cannot be combined with a glob --namespace/)
  })
})
