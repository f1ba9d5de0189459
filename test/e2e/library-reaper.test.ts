import {spawn} from 'node:child_process'
import {mkdtempSync, readdirSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {once} from 'node:events'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {connect} from '../../src/lib/api/index.js'
import {pullBusybox} from '../support/containers.js'
import {cleanupNamespace, lab, labClient, sandboxesIn, uniqueNamespace} from '../support/lab.js'
import {ROOT} from '../support/podctl.js'

/**
 * Issue 36's reaper: a test process SIGKILLed after runPod leaves its pod; the next connect() on the
 * node kills it (reap: false keeps it), and a live session's pod stays.
 */
const client = labClient()
const namespace = uniqueNamespace('lib-reap')
const podDirRoot = mkdtempSync(join(tmpdir(), 'podctl-library-reaper-'))
const roots = {runtimeEndpoint: lab().endpoint, podLogsRoot: lab().logRoot, podDirRoot, env: {}}

function pod(name: string) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {name, namespace},
    spec: {containers: [{name: 'app', image: lab().busybox, command: ['sleep', '3600']}]},
  }
}

// The test process: runs a pod with the built library, says so, and waits to be killed.
const TEST_PROCESS = `
const {connect} = await import(${JSON.stringify(join(ROOT, 'dist/lib/api/index.js'))})
const runtime = await connect(${JSON.stringify({...roots, reap: false})})
await runtime.runPod(${JSON.stringify(pod('orphan'))})
console.log('running')
setInterval(() => {}, 60_000)
`

beforeAll(async () => {
  await pullBusybox(client)
})

afterAll(async () => {
  await cleanupNamespace(client, namespace)
  client.close()
  rmSync(podDirRoot, {recursive: true, force: true})
})

describe("the library's reaper", () => {
  it("kills the pod of a SIGKILLed test process at the next connect(), not with reap: false, and keeps a live session's pod", async () => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', TEST_PROCESS], {
      env: {...process.env, VITEST_POOL_ID: '7'},
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    const [line] = (await once(child.stdout, 'data')) as [Buffer]
    expect(line.toString()).toBe('running\n')
    const [sandbox] = (await client.runtime('listPodSandbox', {filter: {labelSelector: {'io.kubernetes.pod.namespace': namespace}}})).items
    expect(sandbox.labels).toMatchObject({'io.podctl.session.pid': String(child.pid), 'io.podctl.library.worker': 'vitest-7'})
    child.kill('SIGKILL')
    await once(child, 'exit')

    await using live = await connect({...roots, reap: false})
    await live.runPod(pod('live'))
    ;(await connect({...roots, reap: false})).close()
    expect((await sandboxesIn(client, namespace)).length).toBe(2)

    const started = Date.now()
    ;(await connect(roots)).close()
    expect(Date.now() - started).toBeLessThan(30_000)
    const left = (await client.runtime('listPodSandbox', {filter: {labelSelector: {'io.kubernetes.pod.namespace': namespace}}})).items
    expect(left.map((item) => item.metadata?.name)).toEqual(['live'])
    expect(readdirSync(lab().logRoot).filter((name) => name.startsWith(`${namespace}_orphan_`))).toEqual([])
  }, 120_000)
})
