/**
 * One probe manager per runtime in a process (issue 32): leases of the same container share its
 * probes, so an exec probe runs once a period however many users follow the container.
 */
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {parseDocuments} from '../../../src/lib/manifest/load.js'
import {parsePod} from '../../../src/lib/manifest/pod.js'
import type {ProbeEvent} from '../../../src/lib/prober/manager.js'
import {probesFor} from '../../../src/lib/prober/shared-probes.js'
import {FakePodRuntime} from '../../support/fake-pod-runtime.js'

const POD = `
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: shop}
spec:
  containers:
  - name: app
    image: nginx
    readinessProbe: {exec: {command: [check]}, periodSeconds: 1, failureThreshold: 1}
`

let fake: FakePodRuntime

beforeAll(async () => {
  fake = await new FakePodRuntime().start()
})

afterAll(async () => {
  await fake.close()
})

const execs = () => fake.calls.filter((call) => call.method === 'execSync').length

describe('shared probes', () => {
  it('probes a container two leases follow once a period, tells its events to the first, and stops with the last lease', async () => {
    const [document] = await parseDocuments(POD, 'pod.yaml')
    const pod = parsePod(document, 'pod.yaml', {newUid: () => 'uid-web'})
    const target = {pod, podSandboxId: 'sb', containerName: 'app', containerId: 'c-app', startedAtMs: Date.now()}
    fake.execSyncAnswer = () => ({stdout: Buffer.from('not yet'), stderr: Buffer.alloc(0), exitCode: 1})
    const first: ProbeEvent[] = []
    const second: ProbeEvent[] = []
    const run = probesFor(fake.client).lease({onEvent: (event) => first.push(event)})
    const supervisor = probesFor(fake.client).lease({onEvent: (event) => second.push(event)})
    run.addContainer(target)
    supervisor.addContainer(target)
    await new Promise((resolve) => {
      setTimeout(resolve, 3500)
    })
    // One probe at start and one a second after: about 4 in 3.5 s (fewer on a loaded machine), never 8.
    expect(execs()).toBeGreaterThanOrEqual(2)
    expect(execs()).toBeLessThanOrEqual(5)
    expect(first.map((event) => event.reason)).toContain('Unhealthy')
    expect(second).toEqual([])
    expect(supervisor.result('c-app', 'readiness')).toBe('failure')

    await run.stop()
    const afterFirst = execs()
    await new Promise((resolve) => {
      setTimeout(resolve, 1500)
    })
    expect(execs()).toBeGreaterThan(afterFirst)
    expect(second.map((event) => event.reason)).toContain('Unhealthy')

    await supervisor.stop()
    const afterLast = execs()
    await new Promise((resolve) => {
      setTimeout(resolve, 1500)
    })
    expect(execs()).toBe(afterLast)
  })
})
