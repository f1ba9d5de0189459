import {readFileSync} from 'node:fs'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {parse as parseYaml} from 'yaml'

import type {CriClient} from '../../src/lib/cri/client.js'
import {createContainer, ensureImage, waitExited} from '../support/inspect-fixtures.js'
import {cleanupNamespace, createSandbox, lab, labClient, labEnv, sandboxesIn, uniqueNamespace} from '../support/lab.js'
import {podctl, ROOT} from '../support/podctl.js'

const RFC3339_NANO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z$/

describe('podctl inspect', () => {
  let client: CriClient
  const ns = uniqueNamespace('e2e-inspect')
  const env = labEnv()
  let podId = ''
  let appId = ''
  let jobId = ''
  let imageId = ''
  /** Containers created (not started) only to share an ID prefix, for the ambiguity tests. */
  let twins: [string, string] = ['', '']

  beforeAll(async () => {
    client = labClient()
    imageId = await ensureImage(client, lab().busybox)
    podId = await createSandbox(client, {name: 'web', namespace: ns, labels: {app: 'demo'}})
    appId = await createContainer(client, {podId, name: 'app'})
    jobId = await createContainer(client, {podId, name: 'job', command: ['sh', '-c', 'exit 3']})
    await waitExited(client, jobId)
    // Containers until two of ours share a first character (at most 17 by pigeonhole): a prefix
    // that is ambiguous whatever other tests create or remove meanwhile.
    const byFirst = new Map<string, string>([[appId[0], appId]])
    if (byFirst.has(jobId[0])) twins = [byFirst.get(jobId[0])!, jobId]
    else byFirst.set(jobId[0], jobId)
    for (let i = 0; !twins[0] && i < 17; i++) {
      const id = await createContainer(client, {podId, name: `twin${i}`, start: false})
      if (byFirst.has(id[0])) twins = [byFirst.get(id[0])!, id]
      else byFirst.set(id[0], id)
    }
  })

  afterAll(async () => {
    await cleanupNamespace(client, ns)
    expect(await sandboxesIn(client, ns)).toEqual([])
    client.close()
  })

  it('prints a container status with the verbose info merged as JSON and RFC 3339 times', async () => {
    const {code, stdout, stderr} = await podctl(['inspect', appId.slice(0, 12)], {env})
    expect(stderr).toBe('')
    expect(code).toBe(0)
    const doc = JSON.parse(stdout)
    expect(Object.keys(doc)).toEqual(['status', 'info'])
    expect(doc.status).toMatchObject({id: appId, state: 'CONTAINER_RUNNING', metadata: {name: 'app', attempt: 0}})
    expect(doc.status.createdAt).toMatch(RFC3339_NANO)
    expect(doc.status.startedAt).toMatch(RFC3339_NANO)
    expect(doc.status.finishedAt).toBeNull()
    // containerd's info is a JSON document: parsed, not an escaped string
    expect(typeof doc.info).toBe('object')
    expect(doc.info.pid).toBeGreaterThan(0)
    expect(doc.info.runtimeSpec.process.args).toEqual(['sleep', '3600'])
  })

  it('shows an exited container with its exit code and finish time', async () => {
    const doc = JSON.parse((await podctl(['inspect', 'container', 'web/job', '-n', ns], {env})).stdout)
    expect(doc.status).toMatchObject({id: jobId, state: 'CONTAINER_EXITED', exitCode: 3})
    expect(doc.status.finishedAt).toMatch(RFC3339_NANO)
    // Not startedAt: containerd stamps the start after the task started, so a container that exits at
    // once can show a finish a millisecond before its start (seen in CI). Creation always comes first.
    expect(Date.parse(doc.status.finishedAt)).toBeGreaterThanOrEqual(Date.parse(doc.status.createdAt))
  })

  it('prints a pod by name and namespace, and an image by tag', async () => {
    const pod = JSON.parse((await podctl(['inspect', 'pod', 'web', '-n', ns], {env})).stdout)
    expect(pod.status).toMatchObject({id: podId, state: 'SANDBOX_READY', metadata: {name: 'web', namespace: ns}, labels: {app: 'demo'}})
    expect(pod.status.createdAt).toMatch(RFC3339_NANO)
    expect(typeof pod.info).toBe('object')
    expect(pod.info.pid).toBeGreaterThan(0)

    const image = JSON.parse((await podctl(['inspect', lab().busybox], {env})).stdout)
    expect(image.status.id).toBe(imageId)
    expect(image.status.repoTags).toContain(lab().busybox)
    expect(image.status.size).toMatch(/^\d+$/)
    expect(typeof image.info.imageSpec).toBe('object')
  })

  it('prints a list for several references, in the order given, as JSON or YAML', async () => {
    const args = ['inspect', `web_${ns}/app`, podId, lab().busybox]
    const {code, stdout} = await podctl(args, {env})
    expect(code).toBe(0)
    const docs = JSON.parse(stdout)
    expect(docs.map((doc: {status: {id: string}}) => doc.status.id)).toEqual([appId, podId, imageId])
    const yaml = parseYaml((await podctl([...args, '-o', 'yaml'], {env})).stdout)
    expect(yaml.map((doc: {status: {id: string}}) => doc.status.id)).toEqual([appId, podId, imageId])
  })

  it('picks fields with -o jsonpath= and --template, one line per object', async () => {
    const path = await podctl(['inspect', appId, jobId, '-o', 'jsonpath={.status.metadata.name} {.status.state}'], {env})
    expect(path.stdout).toBe('app CONTAINER_RUNNING\njob CONTAINER_EXITED\n')
    const template = await podctl(
      ['inspect', jobId, '--template', '{{.status.exitCode}} {{index .status.labels "io.kubernetes.pod.namespace"}}'],
      {env},
    )
    expect(template.stdout).toBe(`3 ${ns}\n`)
    const pid = await podctl(['inspect', appId, '--template', '{{.info.pid}}'], {env})
    expect(pid.stdout.trim()).toMatch(/^\d+$/)
  })

  it('fails on a missing template key with a usage error', async () => {
    const {code, stdout, stderr} = await podctl(['inspect', appId, '--template', '{{.status.nope}}'], {env})
    expect(code).toBe(2)
    expect(stdout).toBe('')
    expect(stderr).toMatch(/no field "nope" at \.status/)
  })

  it('is NotFound (exit 5) for an unknown reference, and reports it beside the ones it found', async () => {
    const missing = await podctl(['inspect', `nope-${ns}`], {env})
    expect(missing.code).toBe(5)
    expect(missing.stdout).toBe('')
    expect(missing.stderr).toMatch(/no container, pod or image matches "nope-/)

    const mixed = await podctl(['inspect', appId, `nope-${ns}`], {env})
    expect(mixed.code).toBe(5)
    expect(JSON.parse(mixed.stdout).map((doc: {status: {id: string}}) => doc.status.id)).toEqual([appId])
    expect(mixed.stderr).toMatch(/nope-/)
  })

  it('refuses an ambiguous ID prefix with exit 15, listing the matches', async () => {
    expect(twins[0]).not.toBe('')
    const prefix = twins[0][0]
    const {code, stdout, stderr} = await podctl(['inspect', 'container', prefix], {env})
    expect(code).toBe(15)
    expect(stdout).toBe('')
    expect(stderr).toMatch(new RegExp(`container ID prefix "${prefix}" matches \\d+ containers`))
    expect(stderr).toContain(twins[0].slice(0, 13))
    expect(stderr).toContain(twins[1].slice(0, 13))

    const kindless = await podctl(['inspect', prefix], {env})
    expect(kindless.code).toBe(15)
    expect(kindless.stderr).toContain(twins[1].slice(0, 13))
  })
})

describe('podctl version and info', () => {
  const env = labEnv()
  const pkg = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as {version: string}

  it("prints podctl's version and the runtime's, each line saying whose", async () => {
    const {code, stdout} = await podctl(['version'], {env})
    expect(code).toBe(0)
    const runtime = lab()
    // The runtime's VersionResponse.version is the kubelet runtime API version (crictl's "Version:"), not podctl's.
    expect(stdout).toBe(
      [
        `podctl Version:      ${pkg.version}`,
        `Runtime Name:        ${runtime.runtimeName}`,
        `Runtime Version:     ${runtime.runtimeVersion}`,
        'Runtime API Version: v1',
        'Kubelet API Version: 0.1.0',
        '',
      ].join('\n'),
    )
  })

  it('prints versions as JSON and YAML', async () => {
    const json = JSON.parse((await podctl(['version', '-o', 'json'], {env})).stdout)
    expect(json).toEqual({
      client: {version: pkg.version},
      runtime: {version: '0.1.0', runtimeName: lab().runtimeName, runtimeVersion: lab().runtimeVersion, runtimeApiVersion: 'v1'},
    })
    expect(parseYaml((await podctl(['version', '-o', 'yaml'], {env})).stdout)).toEqual(json)
  })

  it('still prints the client version when the runtime is unreachable, exiting 3', async () => {
    const {code, stdout, stderr} = await podctl(['version', '-r', 'unix:///nonexistent/podctl.sock'], {env})
    expect(code).toBe(3)
    expect(stdout).toBe(`podctl Version: ${pkg.version}\n`)
    expect(stderr).toMatch(/no socket at \/nonexistent\/podctl.sock/)
  })

  /**
   * A field of the runtime's own config in its verbose info: containerd 1.6 and CRI-O show the
   * sandbox image; containerd 2.x shows its runtime plugin's config only (the sandbox image lives in
   * the images plugin, which info leaves out), with the lab's restrictOOMScoreAdj.
   */
  const configField =
    lab().runtime === 'containerd2' ? {path: 'restrictOOMScoreAdj', value: true} : {path: 'sandboxImage', value: lab().pause}

  it('prints the verbose runtime status with the info parsed', async () => {
    const {code, stdout} = await podctl(['info'], {env})
    expect(code).toBe(0)
    const doc = JSON.parse(stdout)
    expect(Object.keys(doc)[0]).toBe('status')
    expect(doc.status.conditions.map((c: {type: string}) => c.type)).toEqual(expect.arrayContaining(['RuntimeReady', 'NetworkReady']))
    expect(typeof doc.config).toBe('object')
    expect(doc.config[configField.path]).toBe(configField.value)
    // CRI-O lists its runtime handlers in a new order at each call (a Go map): compare them as a set.
    const byName = (info: {runtimeHandlers?: Array<{name: string}>}) => ({
      ...info,
      runtimeHandlers: info.runtimeHandlers?.toSorted((a, b) => a.name.localeCompare(b.name)),
    })
    expect(byName(parseYaml((await podctl(['info', '-o', 'yaml'], {env})).stdout))).toEqual(byName(doc))
  })

  it('picks info fields with jsonpath and rejects a table', async () => {
    const pick = await podctl(['info', '-o', `jsonpath={.config.${configField.path}}`], {env})
    expect(pick.stdout).toBe(`${configField.value}\n`)
    const table = await podctl(['info', '-o', 'table'], {env})
    expect(table.code).toBe(2)
    expect(table.stderr).toMatch(/-o "table" is not a format here/)
  })
})
